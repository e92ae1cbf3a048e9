import { useState } from 'preact/hooks';
import { fillDays, UsageChart } from '../components/bar-chart.js';
import { ConfirmDialog, Dialog } from '../components/dialog.js';
import { ErrorNotice, Field, FormFooter, Loading } from '../components/ui.js';
import { api } from '../lib/api.js';
import { formatSeconds } from '../lib/format.js';
import { html } from '../lib/html.js';
import { knownScopes } from '../lib/roles.js';
import { useAction } from '../lib/use-action.js';
import { useLoad } from '../lib/use-load.js';

const expiryChoices = [
  ['never', 'Never'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
  ['custom', 'On a date…'],
];

function expiresAt(choice, date) {
  if (choice === 'never') return undefined;
  if (choice === 'custom') return date ? new Date(`${date}T23:59:59`).toISOString() : undefined;
  return new Date(Date.now() + Number(choice) * 86_400_000).toISOString();
}

/** The create form; resolves with the created key (its secret included) through `onCreated`. */
export function CreateKeyDialog({ tenant, onClose, onCreated }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState(['integrations.execute']);
  const [expiry, setExpiry] = useState('never');
  const [date, setDate] = useState('');
  const [limit, setLimit] = useState('');
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(
    async () => {
      const body = { name: name.trim(), scopes };
      const when = expiresAt(expiry, date);
      if (when) body.expires_at = when;
      if (limit !== '') body.rate_limit_per_minute = Number(limit);
      const created = await api('/api-keys', { method: 'POST', tenant, body });
      onCreated(created.data);
    },
    { keepBusyOnSuccess: true },
  );

  const toggle = (scope) => setScopes((s) => (s.includes(scope) ? s.filter((x) => x !== scope) : [...s, scope]));

  return html`<${Dialog} title="Create an API key" onClose=${onClose} wide>
    <form onSubmit=${onSubmit} class="form">
      <${Field} label="Name" hint="What uses this key, e.g. “crm sync”.">
        ${(a) => html`<input ...${a} required maxlength="200" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}
      <//>
      <fieldset class="fieldset">
        <legend>Scopes</legend>
        <div class="scope-grid">
          ${knownScopes.map(
            (scope) => html`<label class="check">
              <input type="checkbox" checked=${scopes.includes(scope)} onChange=${() => toggle(scope)} />
              <code>${scope}</code>
            </label>`,
          )}
        </div>
      </fieldset>
      <div class="form-row">
        <${Field} label="Expires">
          ${(a) => html`<select ...${a} value=${expiry} onChange=${(e) => setExpiry(e.currentTarget.value)}>
            ${expiryChoices.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
          </select>`}
        <//>
        ${
          expiry === 'custom' &&
          html`<${Field} label="Expiry date">
            ${(a) => html`<input ...${a} type="date" required value=${date} onInput=${(e) => setDate(e.currentTarget.value)} />`}
          <//>`
        }
        <${Field} label="Rate limit per minute" hint="Empty: the default (600).">
          ${(a) => html`<input ...${a} type="number" min="1" step="1" inputmode="numeric" value=${limit}
            onInput=${(e) => setLimit(e.currentTarget.value)} />`}
        <//>
      </div>
      <${FormFooter} error=${error} failedTitle="The key was not created" busy=${busy} disabled=${scopes.length === 0}
        label="Create key" busyLabel="Creating…" onCancel=${onClose} />
    </form>
  <//>`;
}

const overlapChoices = [0, 300, 3600, 86_400, 604_800];

export function RotateKeyDialog({ tenant, apiKey, onClose, onRotated }) {
  const [overlap, setOverlap] = useState('3600');
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(
    async () => {
      const rotated = await api(`/api-keys/${encodeURIComponent(apiKey.id)}/rotate`, {
        method: 'POST',
        tenant,
        body: { overlap_seconds: Number(overlap) },
      });
      onRotated(rotated.data);
    },
    { keepBusyOnSuccess: true },
  );
  return html`<${Dialog} title=${`Rotate “${apiKey.name}”`} onClose=${onClose}>
    <form onSubmit=${onSubmit} class="form">
      <p class="dialog__text">
        A new key replaces <code>${apiKey.start}…${apiKey.last4}</code> with the same name, scopes, limit and expiry. The
        old key keeps working during the overlap, so callers can switch without downtime.
      </p>
      <${Field} label="Overlap (seconds)" hint=${`The old key stops working after ${formatSeconds(Number(overlap) || 0)}. 0 to 604800.`}>
        ${(
          a,
        ) => html`<input ...${a} type="number" min="0" max="604800" step="1" required inputmode="numeric" list="overlap-presets"
          value=${overlap} onInput=${(e) => setOverlap(e.currentTarget.value)} />`}
      <//>
      <datalist id="overlap-presets">
        ${overlapChoices.map((s) => html`<option value=${s}>${formatSeconds(s)}</option>`)}
      </datalist>
      <div class="chips" role="group" aria-label="Overlap presets">
        ${overlapChoices.map(
          (s) => html`<button type="button" class="chip" aria-pressed=${String(overlap) === String(s)}
            onClick=${() => setOverlap(String(s))}>${formatSeconds(s)}</button>`,
        )}
      </div>
      <${FormFooter} error=${error} failedTitle="The key was not rotated" busy=${busy}
        label="Rotate key" busyLabel="Rotating…" onCancel=${onClose} />
    </form>
  <//>`;
}

export function RevokeKeyDialog({ tenant, apiKey, onClose, onRevoked }) {
  const {
    busy,
    error,
    run: onConfirm,
  } = useAction(
    async () => {
      const revoked = await api(`/api-keys/${encodeURIComponent(apiKey.id)}`, { method: 'DELETE', tenant });
      onRevoked(revoked.data);
    },
    { keepBusyOnSuccess: true },
  );
  return html`<${ConfirmDialog}
    title=${`Revoke “${apiKey.name}”?`}
    confirmLabel="Revoke key"
    busy=${busy}
    onConfirm=${onConfirm}
    onClose=${onClose}
    error=${error && html`<${ErrorNotice} title="The key was not revoked" error=${error} />`}
  >
    <p>
      Every request with <code>${apiKey.start}…${apiKey.last4}</code> is refused from now on. This cannot be undone.
    </p>
  <//>`;
}

export function UsageDialog({ tenant, apiKey, onClose }) {
  const days = 30;
  const usage = useLoad(
    () => api(`/api-keys/${encodeURIComponent(apiKey.id)}/usage?days=${days}`, { tenant }).then((r) => r.data),
    [tenant, apiKey.id],
  );
  return html`<${Dialog} title=${`Usage of “${apiKey.name}”`} description=${`Requests per day (UTC), last ${days} days.`} onClose=${onClose} wide>
    ${usage.loading && !usage.data && html`<${Loading} />`}
    <${ErrorNotice} error=${usage.error} />
    ${usage.data && html`<${UsageChart} days=${fillDays(usage.data, days)} />`}
    <div class="dialog__actions">
      <button type="button" class="button" onClick=${onClose}>Close</button>
    </div>
  <//>`;
}
