import { useRef } from 'preact/hooks';
import { ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { api } from '../lib/api.js';
import { curlCommand, executePath } from '../lib/curl.js';
import { listExecutions } from '../lib/executions.js';
import { formatDateTime, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useCopy } from '../lib/use-copy.js';
import { useLoad } from '../lib/use-load.js';
import { OperationName, StatusBadge } from './executions.js';

/** How many executions each recent list shows. */
const recentCount = 5;
/** Stands in for an integration's id in the first call while the tenant has none. */
const integrationPlaceholder = 'INTEGRATION_ID';

function TenantCard({ tenant, tenantName, role }) {
  const field = useRef(null);
  const { copy, status } = useCopy(tenant, field);
  return html`<section class="card stack" aria-labelledby="tenant-heading">
    <h2 id="tenant-heading">${tenantName || tenant}</h2>
    <p class="muted">You are ${role === 'admin' || role === 'owner' ? 'an' : 'a'} <strong>${role}</strong> of this tenant.</p>
    <div class="field">
      <label for="tenant-id">ID</label>
      <div class="secret">
        <input ref=${field} id="tenant-id" class="secret__value" readonly value=${tenant} aria-describedby="tenant-id-hint"
          onFocus=${(e) => e.currentTarget.select()} />
        <button type="button" class="button" aria-label="Copy the ID" onClick=${copy}>Copy</button>
      </div>
      <p class="copy-status" role="status">${status}</p>
      <p class="field__hint" id="tenant-id-hint">Every API call names the tenant by this ID, in its <code>X-Tenant-ID</code> header.</p>
    </div>
  </section>`;
}

function DocsCard({ tenant }) {
  // Served by this instance: plain links, which the console itself never fetches.
  return html`<section class="card stack" aria-labelledby="docs-heading">
    <h2 id="docs-heading">Documentation</h2>
    <ul class="doc-links">
      <li>
        <a href="/docs">API reference</a>
        <span class="muted">Every endpoint with its fields, answers and errors, to read and try.</span>
      </li>
      <li>
        <a href="/api/v1/openapi.json">OpenAPI document</a>
        <span class="muted">The same as OpenAPI 3.1 JSON, for API clients and code generators.</span>
      </li>
      <li>
        <${Link} href=${tenantPath(tenant, 'agents')}>AI agents<//>
        <span class="muted">The MCP server’s address and a client configuration for this tenant.</span>
      </li>
    </ul>
  </section>`;
}

/** A first call of the execute endpoint, ready to paste: the tenant's id, its first integration's, a key to set. */
function FirstCallCard({ tenant, role }) {
  const first = useLoad(async () => (await api('/integrations?limit=1', { tenant })).data[0] ?? null, [tenant]);
  const block = useRef(null);
  const integration = first.data?.id ?? integrationPlaceholder;
  const command = curlCommand({ path: executePath(integration), tenant, body: { operation: 'test' } });
  const { copy, status } = useCopy(command, block);
  let about;
  if (first.data) {
    about = html`It runs <code>test</code> on <${Link} href=${tenantPath(tenant, 'integrations', first.data.id)}>${first.data.name || first.data.id}<//>:
      the connector checks that it reaches its upstream, and changes nothing there.`;
  } else {
    about = html`This tenant has no integration yet.${' '}
      ${
        can(role, 'integrations.write')
          ? html`<${Link} href=${tenantPath(tenant, 'new-integration')}>Create one<//>`
          : 'An owner, admin or developer can create one'
      }, then put its id in place of <code>${integrationPlaceholder}</code>.`;
  }
  return html`<section class="card stack" aria-labelledby="first-call-heading">
    <div class="card__header">
      <h2 id="first-call-heading">A first call</h2>
      <div class="copy-actions">
        <p class="copy-status" role="status">${status}</p>
        <button type="button" class="button" aria-label="Copy the first call" onClick=${copy}>Copy</button>
      </div>
    </div>
    <p class="muted">${first.loading ? 'Looking for an integration…' : about}</p>
    <${ErrorNotice} error=${first.error} title="Could not read the integrations" />
    <pre ref=${block} class="code" tabindex="0" aria-label="The first call">${command}</pre>
    <p class="muted">
      Set <code>IX_API_KEY</code> to an API key of this tenant with the <code>integrations.execute</code> scope${
        can(role, 'api_keys.write')
          ? html`: make one on the <${Link} href=${tenantPath(tenant, 'keys')}>API keys<//> screen (its secret is shown once).`
          : '. Keys are made by an owner or admin of this tenant, on the API keys screen.'
      }
    </p>
  </section>`;
}

/** The newest executions of the tenant (`status` to keep to one), each linking to its detail. */
function RecentExecutions({ tenant, title, status, empty, more, moreLabel }) {
  const recent = useLoad(async () => (await listExecutions(tenant, { status, limit: recentCount })).data, [tenant, status]);
  const id = `recent-${status || 'all'}-heading`;
  return html`<section class="card stack" aria-labelledby=${id}>
    <div class="card__header">
      <h2 id=${id}>${title}</h2>
      <${Link} href=${more}>${moreLabel}<//>
    </div>
    <${ErrorNotice} error=${recent.error} title="Could not load the executions" />
    ${recent.loading && !recent.data && html`<${Loading} />`}
    ${recent.data?.length === 0 && html`<p class="muted">${empty}</p>`}
    ${
      recent.data?.length > 0 &&
      html`<ul class="recent">
        ${recent.data.map(
          (e) => html`<li key=${e.id}>
            <div class="recent__head">
              <${Link} href=${tenantPath(tenant, 'executions', e.id)}>${formatDateTime(e.started_at, { seconds: true })}<//>
              <${StatusBadge} status=${e.status} />
            </div>
            <div class="recent__what">
              <span>${e.integration_id}</span> <${OperationName} execution=${e} />
              ${e.error_code && html` <code class="recent__error">${e.error_code}</code>`}
            </div>
            <span class="cell-sub">${formatRelative(e.started_at)} · <code>${e.id}</code></span>
          </li>`,
        )}
      </ul>`
    }
  </section>`;
}

/** The screen one lands on: the tenant and its id, a first call to copy, where the docs are, what ran lately. */
export function Home({ tenant, tenantName, role }) {
  const executable = can(role, 'integrations.execute');
  const runOne = executable ? html` Run one from <${Link} href=${tenantPath(tenant, 'try')}>Try it out<//>.` : '';
  return html`<section class="home">
    <${PageHeader} title="Home" description="Where to start in this tenant, and what ran in it lately." />
    <div class="columns">
      <${TenantCard} tenant=${tenant} tenantName=${tenantName} role=${role} />
      <${DocsCard} tenant=${tenant} />
    </div>
    <${FirstCallCard} tenant=${tenant} role=${role} />
    <div class="columns">
      <${RecentExecutions} tenant=${tenant} title="Recent executions" status=""
        more=${tenantPath(tenant, 'executions')} moreLabel="All executions" empty=${html`No executions yet.${runOne}`} />
      <${RecentExecutions} tenant=${tenant} title="Recent failures" status="failed"
        more=${`${tenantPath(tenant, 'executions')}?status=failed`} moreLabel="All failures" empty="No failed executions." />
    </div>
  </section>`;
}
