import { Badge, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { apiAll } from '../lib/api.js';
import { connectorLabel, connectors } from '../lib/connectors.js';
import { formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useLoad } from '../lib/use-load.js';

/** Every integration of the tenant (all pages). */
export function loadAllIntegrations(tenant) {
  return apiAll('/integrations', { tenant });
}

/** An integration as a menu names it: its name with its id (two may share a name), or its id alone. */
export const integrationLabel = (i) => (i.name && i.name !== i.id ? `${i.name} (${i.id})` : i.id);

export function Integrations({ tenant, role }) {
  const list = useLoad(() => loadAllIntegrations(tenant), [tenant]);
  const writable = can(role, 'integrations.write');
  return html`<section>
    <${PageHeader} title="Integrations" description="Each integration is one connector pointed at one external system.">
      ${writable && html`<${Link} class="button button--primary" href=${tenantPath(tenant, 'new-integration')}>New integration<//>`}
    <//>
    <${ErrorNotice} error=${list.error} title="Could not load the integrations" />
    ${list.loading && !list.data && html`<${Loading} />`}
    ${
      list.data &&
      (list.data.length === 0
        ? html`<${Empty} title="No integrations yet">
            ${
              writable
                ? html`<${Link} href=${tenantPath(tenant, 'new-integration')}>Create one<//> to call a GraphQL or SOAP system through Interchange.`
                : 'An owner, admin or developer of this tenant can create one.'
            }
          <//>`
        : html`<div class="table-wrap">
            <table class="table">
              <caption class="visually-hidden">Integrations of ${tenant}</caption>
              <thead>
                <tr>
                  <th scope="col">Integration</th>
                  <th scope="col">Connector</th>
                  <th scope="col" class="hide-sm">Target</th>
                  <th scope="col" class="hide-md">Updated</th>
                </tr>
              </thead>
              <tbody>
                ${list.data.map((integration) => {
                  const target = integration.config?.[connectors[integration.connector]?.target];
                  return html`<tr key=${integration.id}>
                    <th scope="row">
                      <${Link} class="cell-title" href=${tenantPath(tenant, 'integrations', integration.id)}>
                        ${integration.name || integration.id}
                      <//>
                      ${integration.name && integration.name !== integration.id && html`<span class="cell-sub"><code>${integration.id}</code></span>`}
                    </th>
                    <td><${Badge} tone="info">${connectorLabel(integration.connector)}<//></td>
                    <td class="hide-sm"><span class="truncate">${target || html`<span class="muted">not set</span>`}</span></td>
                    <td class="hide-md">${formatRelative(integration.updated_at)}</td>
                  </tr>`;
                })}
              </tbody>
            </table>
          </div>`)
    }
  </section>`;
}
