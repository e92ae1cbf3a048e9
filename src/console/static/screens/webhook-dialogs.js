import { useState } from 'preact/hooks';
import { ConfirmDialog, Dialog } from '../components/dialog.js';
import { ErrorNotice, Field, FormFooter } from '../components/ui.js';
import { html } from '../lib/html.js';
import { useAction } from '../lib/use-action.js';
import { createWebhook, deleteWebhook, webhookEvents } from '../lib/webhooks.js';

/** The create form; resolves with the created endpoint (its secret included) through `onCreated`. */
export function CreateWebhookDialog({ tenant, onClose, onCreated }) {
  const [url, setUrl] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState([]);
  const [description, setDescription] = useState('');
  const chosen = all ? ['*'] : events;
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(
    async () => onCreated(await createWebhook(tenant, { url: url.trim(), events: chosen, description: description.trim() })),
    { keepBusyOnSuccess: true },
  );
  const toggle = (event) => setEvents((e) => (e.includes(event) ? e.filter((x) => x !== event) : [...e, event]));

  return html`<${Dialog} title="Add a webhook endpoint" onClose=${onClose} wide>
    <form onSubmit=${onSubmit} class="form">
      <${Field} label="Endpoint URL" hint="Interchange POSTs each event here, signed as the Standard Webhooks specification says.">
        ${(
          a,
        ) => html`<input ...${a} type="url" required maxlength="2048" spellcheck=${false} placeholder="https://example.com/hooks/interchange"
          value=${url} onInput=${(e) => setUrl(e.currentTarget.value)} />`}
      <//>
      <fieldset class="fieldset">
        <legend>Events</legend>
        <label class="check">
          <input type="checkbox" checked=${all} onChange=${(e) => setAll(e.currentTarget.checked)} />
          All events (<code>*</code>, those added later included)
        </label>
        <div class="scope-grid">
          ${webhookEvents.map(
            (event) => html`<label class="check">
              <input type="checkbox" disabled=${all} checked=${all || events.includes(event)} onChange=${() => toggle(event)} />
              <code>${event}</code>
            </label>`,
          )}
        </div>
      </fieldset>
      <${Field} label="Description (optional)" hint="Who receives these events, e.g. “billing service”.">
        ${(a) => html`<input ...${a} maxlength="500" value=${description} onInput=${(e) => setDescription(e.currentTarget.value)} />`}
      <//>
      <${FormFooter} error=${error} failedTitle="The endpoint was not added" busy=${busy} disabled=${chosen.length === 0}
        label="Add endpoint" busyLabel="Adding…" onCancel=${onClose} />
    </form>
  <//>`;
}

export function DeleteWebhookDialog({ tenant, webhook, onClose, onDeleted }) {
  const {
    busy,
    error,
    run: onConfirm,
  } = useAction(
    async () => {
      await deleteWebhook(tenant, webhook.id);
      onDeleted(webhook);
    },
    { keepBusyOnSuccess: true },
  );
  return html`<${ConfirmDialog}
    title="Delete this webhook endpoint?"
    confirmLabel="Delete endpoint"
    busy=${busy}
    onConfirm=${onConfirm}
    onClose=${onClose}
    error=${error && html`<${ErrorNotice} title="The endpoint was not deleted" error=${error} />`}
  >
    <p>No more events are sent to <code class="break">${webhook.url}</code>, retries included. This cannot be undone.</p>
  <//>`;
}
