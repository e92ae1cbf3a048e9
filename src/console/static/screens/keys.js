import { useState } from 'preact/hooks';
import { SecretDialog } from '../components/secret.js';
import { Badge, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { apiAll } from '../lib/api.js';
import { formatDateTime, formatNumber, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { useLoad } from '../lib/use-load.js';
import { CreateKeyDialog, RevokeKeyDialog, RotateKeyDialog, UsageDialog } from './key-dialogs.js';

const week = 7 * 86_400_000;

/** As `interchange keys list` shows it: revoked, rotated, expired, expiring (in its overlap or within a week), active. */
export function keyState(key, now = Date.now()) {
  if (key.revoked_at) return { label: 'Revoked', tone: 'danger' };
  const end = key.expires_at ? Date.parse(key.expires_at) : Number.POSITIVE_INFINITY;
  if (end <= now) return key.rotated_to ? { label: 'Rotated', tone: 'neutral' } : { label: 'Expired', tone: 'neutral' };
  if (key.rotated_to) return { label: 'Rotating', tone: 'warning' };
  if (end - now <= week) return { label: 'Expiring', tone: 'warning' };
  return { label: 'Active', tone: 'success' };
}

function loadAllKeys(tenant) {
  return apiAll('/api-keys', { tenant });
}

function KeyRow({ apiKey, writable, onAction }) {
  const state = keyState(apiKey);
  const live = !apiKey.revoked_at && state.label !== 'Expired' && state.label !== 'Rotated';
  return html`<tr>
    <th scope="row">
      <span class="cell-title">${apiKey.name || html`<span class="muted">unnamed</span>`}</span>
      <span class="cell-sub"><code>${apiKey.id}</code></span>
    </th>
    <td><code class="key-mask">${apiKey.start}…${apiKey.last4}</code>${apiKey.legacy && html` <${Badge}>legacy<//>`}</td>
    <td class="hide-sm">
      <div class="scopes">${apiKey.scopes.map((s) => html`<code class="scope">${s}</code>`)}</div>
    </td>
    <td class="hide-md" data-label="Last used" title=${formatDateTime(apiKey.usage?.last_used_at)}>${formatRelative(apiKey.usage?.last_used_at)}</td>
    <td class="hide-lg" data-label="Expires" title=${apiKey.expires_at ? formatDateTime(apiKey.expires_at) : ''}>
      ${apiKey.expires_at ? formatRelative(apiKey.expires_at) : 'never'}
    </td>
    <td class="hide-lg num" data-label="Limit">${formatNumber(apiKey.rate_limit_per_minute)}/min</td>
    <td><${Badge} tone=${state.tone}>${state.label}<//></td>
    <td class="actions">
      <button type="button" class="button button--small" onClick=${() => onAction('usage', apiKey)}
        aria-label=${`Usage of ${apiKey.name} (${apiKey.id})`}>Usage</button>
      ${
        writable &&
        live &&
        html`<button type="button" class="button button--small" onClick=${() => onAction('rotate', apiKey)}
            aria-label=${`Rotate ${apiKey.name} (${apiKey.id})`}>Rotate</button>
          <button type="button" class="button button--small button--danger-ghost" onClick=${() => onAction('revoke', apiKey)}
            aria-label=${`Revoke ${apiKey.name} (${apiKey.id})`}>Revoke</button>`
      }
    </td>
  </tr>`;
}

export function Keys({ tenant, role }) {
  const keys = useLoad(() => loadAllKeys(tenant), [tenant]);
  const [dialog, setDialog] = useState(null);
  const [announcement, setAnnouncement] = useState('');
  const writable = can(role, 'api_keys.write');
  const close = () => setDialog(null);
  const done = (message) => {
    setAnnouncement(message);
    keys.reload();
  };

  let dialogView = null;
  if (dialog?.kind === 'create') {
    dialogView = html`<${CreateKeyDialog} tenant=${tenant} onClose=${close}
      onCreated=${(created) => {
        setDialog({ kind: 'secret', title: `Key “${created.name}” created`, secret: created.key });
        done(`Created the key ${created.name}.`);
      }} />`;
  } else if (dialog?.kind === 'rotate') {
    dialogView = html`<${RotateKeyDialog} tenant=${tenant} apiKey=${dialog.key} onClose=${close}
      onRotated=${(rotated) => {
        setDialog({ kind: 'secret', title: `Key “${rotated.name}” rotated`, secret: rotated.key });
        done(`Rotated the key ${rotated.name}.`);
      }} />`;
  } else if (dialog?.kind === 'revoke') {
    dialogView = html`<${RevokeKeyDialog} tenant=${tenant} apiKey=${dialog.key} onClose=${close}
      onRevoked=${(revoked) => {
        close();
        done(`Revoked the key ${revoked.name}.`);
      }} />`;
  } else if (dialog?.kind === 'usage') {
    dialogView = html`<${UsageDialog} tenant=${tenant} apiKey=${dialog.key} onClose=${close} />`;
  } else if (dialog?.kind === 'secret') {
    dialogView = html`<${SecretDialog} title=${dialog.title} secret=${dialog.secret} onClose=${close} />`;
  }

  return html`<section>
    <${PageHeader} title="API keys" description="Keys let machines call Interchange. Each is scoped, rate limited and shown once.">
      ${writable && html`<button type="button" class="button button--primary" onClick=${() => setDialog({ kind: 'create' })}>Create key</button>`}
    <//>
    <p class="visually-hidden" role="status" aria-live="polite">${announcement}</p>
    <${ErrorNotice} error=${keys.error} title="Could not load the keys" />
    ${keys.loading && !keys.data && html`<${Loading} />`}
    ${
      keys.data &&
      (keys.data.length === 0
        ? html`<${Empty} title="No API keys yet">
            ${writable ? 'Create one for each system that calls Interchange.' : 'An owner or admin of this tenant can create one.'}
          <//>`
        : html`<div class="table-wrap">
            <table class="table table--stack">
              <caption class="visually-hidden">API keys of ${tenant}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col" class="hide-sm">Scopes</th>
                  <th scope="col" class="hide-md">Last used</th>
                  <th scope="col" class="hide-lg">Expires</th>
                  <th scope="col" class="hide-lg num">Limit</th>
                  <th scope="col">State</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${keys.data.map(
                  (k) => html`<${KeyRow} key=${k.id} apiKey=${k} writable=${writable}
                    onAction=${(kind, apiKey) => setDialog({ kind, key: apiKey })} />`,
                )}
              </tbody>
            </table>
          </div>`)
    }
    ${dialogView}
  </section>`;
}
