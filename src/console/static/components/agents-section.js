import { useState } from 'preact/hooks';
import { catalogOf, isRawSoap } from '../lib/catalog.js';
import { html } from '../lib/html.js';
import { keepingFocus } from '../lib/keep-focus.js';
import { Link, tenantPath } from '../lib/router.js';
import { useAction } from '../lib/use-action.js';
import { ErrorNotice } from './ui.js';

/** A labelled on/off switch: a checkbox with the switch role, its hint tied to it. */
function Switch({ id, label, hint, checked, disabled, onChange }) {
  return html`<div class="switch-field">
    <input type="checkbox" role="switch" class="switch" id=${id} checked=${checked} disabled=${disabled}
      aria-describedby=${`${id}-hint`} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <div>
      <label for=${id}>${label}</label>
      <p class="field__hint" id=${`${id}-hint`}>${hint}</p>
    </div>
  </div>`;
}

/** What a change of one setting did, said once it is saved. */
const savedMessages = {
  mcp: (on) => (on ? 'Offered to AI agents.' : 'No longer offered to AI agents.'),
  allow_writes: (on) => (on ? 'Agents may now run its write operations.' : 'Agents may no longer run its write operations.'),
  root_fields: (on) => (on ? 'Root fields are now operations.' : 'Root fields are no longer operations.'),
};

/**
 * The integration's "AI agents (MCP)" settings (docs/mcp.md): whether its operations are offered as tools, writes
 * included or not, and for GraphQL whether root fields are operations. Each switch saves at once through `save`
 * (a PATCH of `catalog`); while one saves the others wait. A role that may not write sees them, disabled.
 */
export function AgentsSection({ tenant, integration, writable, saving, save, onReload }) {
  const catalog = catalogOf(integration);
  const graphql = integration.connector === 'graphql-1.0.0';
  const [status, setStatus] = useState('');
  // The switch being saved shows its new position meanwhile; a failure puts it back.
  const [pending, setPending] = useState(null);
  const { error, run } = useAction(async (field, on) => {
    setStatus('');
    setPending({ field, on });
    try {
      await keepingFocus(() => save({ [field]: on }));
    } finally {
      setPending(null);
    }
    setStatus(savedMessages[field](on));
  });
  const value = (field) => (pending?.field === field ? pending.on : catalog[field]);
  const disabled = !writable || saving;
  return html`<section class="card stack" aria-labelledby="agents-heading">
    <h2 id="agents-heading">AI agents (MCP)</h2>
    <p class="muted">
      Its operations as tools of the <${Link} href=${tenantPath(tenant, 'agents')}>MCP server<//>: read operations once
      offered, write operations only when allowed too.
    </p>
    <${Switch} id="catalog-mcp" label="Offer to AI agents" checked=${value('mcp')} disabled=${disabled}
      hint="Agents with a key of this tenant list and call its operations as tools."
      onChange=${(on) => run('mcp', on)} />
    <${Switch} id="catalog-writes" label="Allow writes" checked=${value('allow_writes')} disabled=${disabled}
      hint=${
        graphql
          ? 'Mutations become tools too: an agent could change data upstream.'
          : 'Operations not marked read-only below become tools too: an agent could change data upstream.'
      }
      onChange=${(on) => run('allow_writes', on)} />
    ${
      graphql &&
      html`<${Switch} id="catalog-root-fields" label="Root fields as operations" checked=${value('root_fields')}
        disabled=${disabled} hint="Each Query field is a read operation and each Mutation field a write, beside the saved documents."
        onChange=${(on) => run('root_fields', on)} />`
    }
    ${
      isRawSoap(integration) &&
      html`<p class="field__hint">Without a WSDL (raw mode) it has no operations to offer, whatever these say.</p>`
    }
    ${!writable && html`<p class="field__hint">Your role can see these settings but not change them.</p>`}
    <div aria-live="polite">
      ${error && html`<${ErrorNotice} title="Not saved" error=${error} />`}
      ${error?.stale && html`<button type="button" class="button" onClick=${onReload}>Reload the current version</button>`}
      ${status && !error && html`<p class="notice notice--success" role="status">${status}</p>`}
    </div>
  </section>`;
}
