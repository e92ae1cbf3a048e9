import { useState } from 'preact/hooks';
import { ConfirmDialog, Dialog } from '../components/dialog.js';
import { ErrorNotice, Field, FormFooter } from '../components/ui.js';
import { html } from '../lib/html.js';
import { useAction } from '../lib/use-action.js';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook, webhookEvents } from '../lib/webhooks.js';

/**
 * The endpoint's URL, events and description, as the create and edit dialogs ask for them; `onSave` gets
 * `{url, events, description}` (description `''` when empty).
 */
function WebhookForm({ initial, onSave, onClose, label, busyLabel, failedTitle }) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [all, setAll] = useState(initial ? initial.events.includes('*') : true);
  const [events, setEvents] = useState(initial && !initial.events.includes('*') ? initial.events : []);
  const [description, setDescription] = useState(initial?.description ?? '');
  const chosen = all ? ['*'] : events;
  const {
    busy,
    error,
    run: onSubmit,
  } = useAction(async () => onSave({ url: url.trim(), events: chosen, description: description.trim() }), {
    keepBusyOnSuccess: true,
  });
  const toggle = (event) => setEvents((e) => (e.includes(event) ? e.filter((x) => x !== event) : [...e, event]));

  return html`<form onSubmit=${onSubmit} class="form">
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
    <${FormFooter} error=${error} failedTitle=${failedTitle} busy=${busy} disabled=${chosen.length === 0}
      label=${label} busyLabel=${busyLabel} onCancel=${onClose} />
  </form>`;
}

/** The create form; resolves with the created endpoint (its secret included) through `onCreated`. */
export function CreateWebhookDialog({ tenant, onClose, onCreated }) {
  const save = async ({ url, events, description }) => {
    const body = { url, events };
    if (description) body.description = description;
    onCreated(await createWebhook(tenant, body));
  };
  return html`<${Dialog} title="Add a webhook endpoint" onClose=${onClose} wide>
    <${WebhookForm} onSave=${save} onClose=${onClose} label="Add endpoint" busyLabel="Adding…"
      failedTitle="The endpoint was not added" />
  <//>`;
}

/** Changes the URL, events and description; `onSaved` gets the endpoint as changed. */
export function EditWebhookDialog({ tenant, webhook, onClose, onSaved }) {
  const save = async ({ url, events, description }) =>
    onSaved(await updateWebhook(tenant, webhook.id, { url, events, description: description || null }));
  return html`<${Dialog} title="Edit the webhook endpoint" description=${html`<code>${webhook.id}</code>`} onClose=${onClose} wide>
    <${WebhookForm} initial=${webhook} onSave=${save} onClose=${onClose} label="Save changes" busyLabel="Saving…"
      failedTitle="The endpoint was not changed" />
  <//>`;
}

/** A confirmed action on one endpoint: `run()` is awaited, then `onDone(result)`. */
function ConfirmWebhook({ title, confirmLabel, failedTitle, run, onDone, onClose, children }) {
  const { busy, error, run: onConfirm } = useAction(async () => onDone(await run()), { keepBusyOnSuccess: true });
  return html`<${ConfirmDialog}
    title=${title}
    confirmLabel=${confirmLabel}
    busy=${busy}
    onConfirm=${onConfirm}
    onClose=${onClose}
    error=${error && html`<${ErrorNotice} title=${failedTitle} error=${error} />`}
  >
    ${children}
  <//>`;
}

export function DeleteWebhookDialog({ tenant, webhook, onClose, onDeleted }) {
  return html`<${ConfirmWebhook} title="Delete this webhook endpoint?" confirmLabel="Delete endpoint"
    failedTitle="The endpoint was not deleted" run=${() => deleteWebhook(tenant, webhook.id)} onDone=${() => onDeleted(webhook)}
    onClose=${onClose}>
    <p>No more events are sent to <code class="break">${webhook.url}</code> (<code>${webhook.id}</code>), retries
      included. This cannot be undone.</p>
  <//>`;
}

/** Disabling drops the endpoint's waiting retries: asked first. Enabling needs no confirmation (the screen does it). */
export function DisableWebhookDialog({ tenant, webhook, onClose, onDisabled }) {
  return html`<${ConfirmWebhook} title="Disable this webhook endpoint?" confirmLabel="Disable endpoint"
    failedTitle="The endpoint was not disabled" run=${() => updateWebhook(tenant, webhook.id, { disabled: true })}
    onDone=${onDisabled} onClose=${onClose}>
    <p>Nothing is sent to <code class="break">${webhook.url}</code> (<code>${webhook.id}</code>) while it is
      disabled: its waiting retries are dropped, and new events are not kept for it. Enable it again at any time.</p>
  <//>`;
}

/** `onRotated` gets the endpoint with its new secret, to be shown once. */
export function RotateSecretDialog({ tenant, webhook, onClose, onRotated }) {
  return html`<${ConfirmWebhook} title="Rotate the signing secret?" confirmLabel="Rotate secret"
    failedTitle="The secret was not rotated" run=${() => rotateWebhookSecret(tenant, webhook.id)} onDone=${onRotated}
    onClose=${onClose}>
    <p>A new secret signs the deliveries to <code class="break">${webhook.url}</code> (<code>${webhook.id}</code>).
      The current one also signs them for 24 hours: deploy the new one to the receiver within that time.</p>
  <//>`;
}
