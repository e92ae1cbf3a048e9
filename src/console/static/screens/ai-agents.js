import { useRef } from 'preact/hooks';
import { Badge, DottedName, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { html } from '../lib/html.js';
import { clientConfiguration, listTools, mcpProtocolVersion, mcpUrl, toolSummary } from '../lib/mcp.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useCopy } from '../lib/use-copy.js';
import { useLoad } from '../lib/use-load.js';

function ServerCard({ tenant }) {
  const address = useRef(null);
  const { copy, status } = useCopy(mcpUrl(), address);
  return html`<section class="card stack" aria-labelledby="mcp-server-heading">
    <h2 id="mcp-server-heading">MCP server</h2>
    <p class="muted">
      Agents connect over Streamable HTTP (MCP <span class="nowrap">${mcpProtocolVersion}</span> or <span class="nowrap">2025-06-18</span>)
      and authenticate as any caller of the API: an API key of this tenant as <code>X-API-Key</code>, and <code>X-Tenant-ID: ${tenant}</code>.
    </p>
    <div class="field">
      <label for="mcp-address">Address</label>
      <div class="secret">
        <input ref=${address} id="mcp-address" class="secret__value" readonly value=${mcpUrl()}
          onFocus=${(e) => e.currentTarget.select()} />
        <button type="button" class="button" aria-label="Copy the address" onClick=${copy}>Copy</button>
      </div>
      <p class="copy-status" role="status">${status}</p>
    </div>
    <p class="field__hint">
      Listing tools needs the key’s <code>integrations.read</code> scope; calling them, <code>integrations.execute</code>.
      Every call is logged with the executions, marked as made through MCP.
    </p>
  </section>`;
}

function ConfigurationCard({ tenant, role }) {
  const block = useRef(null);
  const text = JSON.stringify(clientConfiguration(tenant), null, 2);
  const { copy, status } = useCopy(text, block);
  return html`<section class="card stack" aria-labelledby="mcp-config-heading">
    <div class="card__header">
      <h2 id="mcp-config-heading">Client configuration</h2>
      <div class="copy-actions">
        <p class="copy-status" role="status">${status}</p>
        <button type="button" class="button" aria-label="Copy the client configuration" onClick=${copy}>Copy</button>
      </div>
    </div>
    <p class="muted">
      For an MCP client that reads <code>mcpServers</code>. Replace <code>${'<your API key>'}</code> with a key of this
      tenant${
        can(role, 'api_keys.write')
          ? html` (<${Link} href=${tenantPath(tenant, 'keys')}>create one<//> for the agent alone, so it can be revoked alone)`
          : ''
      }.
    </p>
    <pre ref=${block} class="code" tabindex="0" aria-label="MCP client configuration">${text}</pre>
  </section>`;
}

function ToolsTable({ tenant, tools }) {
  return html`<div class="table-wrap">
    <table class="table table--stack">
      <caption class="visually-hidden">Tools offered to AI agents of ${tenant}, ${tools.length} in all</caption>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Integration</th>
          <th scope="col">Kind</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        ${tools.map(
          (t) => html`<tr key=${t.name}>
            <th scope="row"><code><${DottedName} name=${t.name} /></code></th>
            <td>
              ${
                t.integration
                  ? html`<${Link} href=${tenantPath(tenant, 'integrations', t.integration)}>${t.integration}<//>`
                  : html`<span class="muted">—</span>`
              }
            </td>
            <td>${t.kind === 'read' ? html`<${Badge} tone="info">read<//>` : html`<${Badge} tone="warning">write<//>`}</td>
            <td class="tool__description">${t.description || html`<span class="muted">No description.</span>`}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The "AI agents" screen: the MCP server's address, a client's configuration, and the tools offered to the tenant. */
export function AiAgents({ tenant, role }) {
  const tools = useLoad(async () => (await listTools(tenant)).map(toolSummary), [tenant]);
  const writable = can(role, 'integrations.write');
  const list = tools.data;
  return html`<section>
    <${PageHeader} title="AI agents"
      description="Offer integrations’ operations to AI agents as tools, through the Model Context Protocol (MCP)." />
    <div class="columns">
      <${ServerCard} tenant=${tenant} />
      <${ConfigurationCard} tenant=${tenant} role=${role} />
    </div>
    <section class="tools" aria-labelledby="tools-heading">
      <div class="section-header">
        <h2 id="tools-heading">Tools offered${list ? ` (${list.length})` : ''}</h2>
        <button type="button" class="button button--small" onClick=${tools.reload} disabled=${tools.loading}>
          ${tools.loading && list ? 'Reloading…' : 'Reload'}
        </button>
      </div>
      <p class="muted">What an agent with a key of this tenant is offered now, as the MCP server lists it.</p>
      <${ErrorNotice} error=${tools.error} title="Could not list the tools" />
      ${tools.loading && !list && html`<${Loading} label="Asking the MCP server for its tools…" />`}
      ${
        list?.length === 0 &&
        html`<${Empty} title="No tools offered yet">
          <p>
            An integration’s operations become tools once it is offered to AI agents: its read operations, and its writes
            when it allows them.
          </p>
          ${
            writable
              ? html`<p>
                  Open <${Link} href=${tenantPath(tenant, 'integrations')}>an integration<//> and, in its AI agents (MCP)
                  section, switch on <strong>Offer to AI agents</strong>.
                </p>`
              : html`<p>An owner, admin or developer of this tenant can offer them.</p>`
          }
        <//>`
      }
      ${list?.length > 0 && html`<${ToolsTable} tenant=${tenant} tools=${list} />`}
    </section>
  </section>`;
}
