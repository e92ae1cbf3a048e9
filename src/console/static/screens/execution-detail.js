import { useState } from 'preact/hooks';
import { ErrorNotice, JsonBlock, Loading, PageHeader } from '../components/ui.js';
import { getExecution, isActive } from '../lib/executions.js';
import { formatCount, formatDateTime } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useLoad } from '../lib/use-load.js';
import { usePolling } from '../lib/use-polling.js';
import { Caller, CancelButton, durationOf, OperationName, pollMs, StatusBadge } from './executions.js';

function Outcome({ e }) {
  if (e.status === 'queued') {
    return html`<div class="card"><h2>Queued</h2><p>Waiting for a worker. This page follows it until it finishes.</p></div>`;
  }
  if (e.status === 'running') {
    return html`<div class="card"><h2>Running</h2><p>This page follows it until it finishes.</p></div>`;
  }
  if (e.status === 'canceled') {
    return html`<div class="card"><h2>Canceled</h2><p>Canceled before it ran: nothing was sent upstream.</p></div>`;
  }
  if (e.status === 'failed') {
    return html`<section class="card card--error" aria-labelledby="error-heading">
      <h2 id="error-heading">Error</h2>
      <dl class="details">
        <div><dt>Code</dt><dd><code>${e.error_code}</code></dd></div>
        <div><dt>Message</dt><dd>${e.error_message}</dd></div>
      </dl>
      ${e.error_details ? html`<h3 class="section-title">Details</h3><${JsonBlock} value=${e.error_details} label="Error details" />` : html`<p class="muted">No details.</p>`}
    </section>`;
  }
  const kept = e.mode === 'async' ? 'Its answer is below.' : 'Bodies are not stored.';
  return html`<div class="card"><h2>Succeeded</h2><p>Succeeded with ${formatCount(e.message_count, 'message')}. ${kept}</p></div>`;
}

/** What an async execution answered: the body the synchronous call would have had, kept for a while. */
function AsyncResult({ e }) {
  let content;
  if (e.result_expired) {
    content = html`<p>The result is no longer kept: results are dropped after <code>IX_RESULT_RETENTION_HOURS</code> (24 by
      default).</p>`;
  } else if (e.result === undefined || e.result === null) {
    content = html`<p class="muted">No result yet.</p>`;
  } else {
    content = html`<${JsonBlock} value=${e.result} label="Result body" />`;
  }
  return html`<section class="card result" aria-labelledby="result-heading">
    <h2 id="result-heading">Result</h2>
    ${content}
  </section>`;
}

export function ExecutionDetail({ tenant, role, id }) {
  const execution = useLoad(() => getExecution(tenant, id), [tenant, id]);
  const [cancelError, setCancelError] = useState(null);
  const e = execution.data;
  // An unfinished execution is followed until it finishes; the poll stops with it, or when the screen closes.
  usePolling(() => !execution.loading && execution.reload(), pollMs, Boolean(e && isActive(e)));
  const rows = e && [
    ['Integration', html`<${Link} href=${tenantPath(tenant, 'integrations', e.integration_id)}>${e.integration_id}<//>`],
    ['Connector', html`<code>${e.connector}</code>`],
    ['Operation', html`<${OperationName} execution=${e} />`],
    ['Mode', e.mode],
    ['Status', html`<${StatusBadge} status=${e.status} />`],
    // Tries of the upstream, retries included: known when it has finished.
    ['Attempts', e.finished_at ? e.attempts : '—'],
    ['HTTP status', e.http_status ?? '—'],
    ['Started', formatDateTime(e.started_at, { seconds: true })],
    ['Finished', formatDateTime(e.finished_at, { seconds: true })],
    ['Duration', durationOf(e)],
    ['Messages', e.message_count],
    ['Caller', html`<${Caller} execution=${e} />`],
    ['Request ID', html`<code>${e.request_id}</code>`],
  ];
  const cancelable = e?.status === 'queued' && can(role, 'integrations.execute');
  return html`<section>
    <p class="breadcrumbs"><${Link} href=${tenantPath(tenant, 'executions')}>Executions<//> / ${id}</p>
    <${PageHeader} title="Execution" description=${id}>
      ${
        cancelable &&
        html`<${CancelButton} tenant=${tenant} execution=${e}
          onDone=${() => {
            setCancelError(null);
            execution.reload();
          }}
          onError=${(failure) => {
            setCancelError(failure);
            execution.reload();
          }} />`
      }
    <//>
    <${ErrorNotice} error=${execution.error} title="Could not load the execution" />
    <${ErrorNotice} error=${cancelError} title="Could not cancel the execution" />
    ${execution.loading && !e && html`<${Loading} />`}
    ${
      e &&
      html`<div class="columns" aria-live="polite">
        <div class="card">
          <h2>Summary</h2>
          <dl class="details">${rows.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>
        </div>
        <${Outcome} e=${e} />
      </div>
      ${e.mode === 'async' && !isActive(e) && e.status !== 'canceled' && html`<${AsyncResult} e=${e} />`}`
    }
  </section>`;
}
