import { ErrorNotice, JsonBlock, Loading, PageHeader } from '../components/ui.js';
import { api } from '../lib/api.js';
import { formatDateTime, formatDuration } from '../lib/format.js';
import { html } from '../lib/html.js';
import { Link, tenantPath } from '../lib/router.js';
import { useLoad } from '../lib/use-load.js';
import { StatusBadge } from './executions.js';

export function ExecutionDetail({ tenant, id }) {
  const execution = useLoad(() => api(`/executions/${encodeURIComponent(id)}`, { tenant }).then((r) => r.data), [tenant, id]);
  const e = execution.data;
  const rows = e && [
    ['Integration', html`<${Link} href=${tenantPath(tenant, 'integrations', e.integration_id)}>${e.integration_id}<//>`],
    ['Connector', html`<code>${e.connector}</code>`],
    ['Operation', html`<code>${e.operation}</code>`],
    ['Status', html`<${StatusBadge} status=${e.status} />`],
    ['HTTP status', e.http_status],
    ['Started', formatDateTime(e.started_at)],
    ['Duration', formatDuration(e.duration_ms)],
    ['Messages', e.message_count],
    ['Caller', e.user_id ? html`person <code>${e.user_id}</code>` : html`key <code>${e.api_key_id}</code>`],
    ['Request ID', html`<code>${e.request_id}</code>`],
  ];
  return html`<section>
    <p class="breadcrumbs"><${Link} href=${tenantPath(tenant, 'executions')}>Executions<//> / ${id}</p>
    <${PageHeader} title="Execution" description=${id} />
    <${ErrorNotice} error=${execution.error} title="Could not load the execution" />
    ${execution.loading && !e && html`<${Loading} />`}
    ${
      e &&
      html`<div class="columns">
        <div class="card">
          <h2>Summary</h2>
          <dl class="details">${rows.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>
        </div>
        ${
          e.status === 'failed'
            ? html`<section class="card card--error" aria-labelledby="error-heading">
                <h2 id="error-heading">Error</h2>
                <dl class="details">
                  <div><dt>Code</dt><dd><code>${e.error_code}</code></dd></div>
                  <div><dt>Message</dt><dd>${e.error_message}</dd></div>
                </dl>
                ${e.error_details ? html`<h3 class="section-title">Details</h3><${JsonBlock} value=${e.error_details} label="Error details" />` : html`<p class="muted">No details.</p>`}
              </section>`
            : html`<div class="card"><h2>Result</h2><p>Succeeded with ${e.message_count} messages. Bodies are not stored.</p></div>`
        }
      </div>`
    }
  </section>`;
}
