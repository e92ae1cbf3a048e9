import { useState } from 'preact/hooks';
import { SecretDialog } from '../components/secret.js';
import { Badge, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { formatDateTime, formatDuration, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { useAction } from '../lib/use-action.js';
import { useLoad } from '../lib/use-load.js';
import { usePolling } from '../lib/use-polling.js';
import { listDeliveries, listWebhooks, nextAttemptState, resendDelivery, sendTestEvent, updateWebhook } from '../lib/webhooks.js';
import { DeliveryDialog } from './webhook-delivery.js';
import {
  CreateWebhookDialog,
  DeleteWebhookDialog,
  DisableWebhookDialog,
  EditWebhookDialog,
  RotateSecretDialog,
} from './webhook-dialogs.js';

/** How often an open deliveries panel is read again: retries and test events show up by themselves. */
const deliveriesPollMs = 3000;

const dash = html`<span class="muted">—</span>`;

/** When the attempt after this one is, as it reads now: a retry that was made or dropped is not "17 seconds ago". */
function NextAttempt({ delivery, deliveries, webhook }) {
  const next = nextAttemptState(delivery, deliveries, webhook);
  const when = delivery.next_attempt_at && formatDateTime(delivery.next_attempt_at, { seconds: true });
  if (next.kind === 'none') return dash;
  if (next.kind === 'retried') return html`<span class="muted" title=${`Was due ${when}`}>Retried</span>`;
  if (next.kind === 'dropped') return html`<span class="muted" title=${`Was due ${when}`}>Not sent: disabled</span>`;
  if (next.kind === 'due') return html`<span title=${`Due ${when}`}>Due now</span>`;
  return html`<span title=${when}>${formatRelative(next.at)}</span>`;
}

function DeliveriesPanel({ tenant, webhook, writable, onClose, onView, onResend, resendingId }) {
  const deliveries = useLoad(() => listDeliveries(tenant, webhook.id), [tenant, webhook.id]);
  usePolling(() => !deliveries.loading && deliveries.reload(), deliveriesPollMs);
  const list = deliveries.data;
  const mayResend = writable && !webhook.disabled;
  return html`<section class="card panel" aria-labelledby="deliveries-heading">
    <div class="panel__header">
      <h2 id="deliveries-heading">Deliveries to <span class="break">${webhook.url}</span></h2>
      <button type="button" class="button button--small" onClick=${onClose}>Close</button>
    </div>
    <p class="muted">
      <code>${webhook.id}</code>. The most recent attempts, newest first. A failed one is tried again with growing
      delays.${writable && webhook.disabled ? ' The endpoint is disabled: enable it to resend an event.' : ''}
    </p>
    <${ErrorNotice} error=${deliveries.error} title="Could not load the deliveries" />
    ${deliveries.loading && !list && html`<${Loading} />`}
    ${list?.length === 0 && html`<${Empty} title="No deliveries yet">Events show here once one is sent.<//>`}
    ${
      list?.length > 0 &&
      html`<div class="table-wrap">
        <table class="table">
          <caption class="visually-hidden">Deliveries to ${webhook.url}, ${list.length} shown</caption>
          <thead>
            <tr>
              <th scope="col">Sent</th>
              <th scope="col">Event</th>
              <th scope="col" class="num">Attempt</th>
              <th scope="col" class="num">HTTP</th>
              <th scope="col" class="hide-sm num">Duration</th>
              <th scope="col" class="hide-md">Error</th>
              <th scope="col" class="hide-md">Next attempt</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            ${list.map(
              (d) => html`<tr key=${d.id}>
                <th scope="row" title=${formatDateTime(d.created_at, { seconds: true })}>${formatRelative(d.created_at)}</th>
                <td><code>${d.event_type}</code><span class="cell-sub"><code>${d.event_id}</code></span></td>
                <td class="num">${d.attempt}</td>
                <td class="num">
                  ${d.http_status === null || d.http_status === undefined ? dash : html`<${Badge} tone=${d.http_status < 300 ? 'success' : 'danger'}>${d.http_status}<//>`}
                </td>
                <td class="hide-sm num">${formatDuration(d.duration_ms)}</td>
                <td class="hide-md">${d.error ? html`<span class="break">${d.error}</span>` : dash}</td>
                <td class="hide-md"><${NextAttempt} delivery=${d} deliveries=${list} webhook=${webhook} /></td>
                <td class="actions">
                  <button type="button" class="button button--small" onClick=${() => onView(d)}
                    aria-label=${`Details of attempt ${d.attempt} of ${d.event_id}`}>Details</button>
                  ${
                    mayResend &&
                    html`<button type="button" class="button button--small" onClick=${() => onResend(d)}
                      disabled=${resendingId === d.id} aria-label=${`Resend ${d.event_id} (attempt ${d.attempt})`}>
                      ${resendingId === d.id ? 'Resending…' : 'Resend'}
                    </button>`
                  }
                </td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }
  </section>`;
}

function WebhookRow({ webhook, writable, onAction, busy }) {
  const label = (verb) => `${verb} ${webhook.url}`;
  return html`<tr>
    <th scope="row">
      <span class="cell-title break">${webhook.url}</span>
      <span class="cell-sub"><code>${webhook.id}</code></span>
      ${webhook.description && html`<span class="cell-sub">${webhook.description}</span>`}
    </th>
    <td class="hide-sm">
      <div class="scopes">${webhook.events.map((e) => html`<code class="scope">${e}</code>`)}</div>
    </td>
    <td>${webhook.disabled ? html`<${Badge} tone="danger">Disabled<//>` : html`<${Badge} tone="success">Active<//>`}</td>
    <td class="hide-md" title=${formatDateTime(webhook.created_at)}>${formatRelative(webhook.created_at)}</td>
    <td class="actions webhook-actions">
      <div class="webhook-actions__list">
      <button type="button" class="button button--small" onClick=${() => onAction('deliveries', webhook)}
        aria-label=${`Deliveries to ${webhook.url}`}>Deliveries</button>
      ${
        writable &&
        html`<button type="button" class="button button--small" onClick=${() => onAction('edit', webhook)}
            aria-label=${label('Edit')}>Edit</button>
          ${
            webhook.disabled
              ? html`<button type="button" class="button button--small" onClick=${() => onAction('enable', webhook)}
                  disabled=${busy === 'enable'} aria-label=${label('Enable')}>${busy === 'enable' ? 'Enabling…' : 'Enable'}</button>`
              : html`<button type="button" class="button button--small" onClick=${() => onAction('disable', webhook)}
                  aria-label=${label('Disable')}>Disable</button>`
          }
          <button type="button" class="button button--small" onClick=${() => onAction('rotate', webhook)}
            aria-label=${`Rotate the signing secret of ${webhook.url}`}>Rotate secret</button>
          ${
            !webhook.disabled &&
            html`<button type="button" class="button button--small" onClick=${() => onAction('test', webhook)}
              disabled=${busy === 'test'} aria-label=${`Send a test event to ${webhook.url}`}>${busy === 'test' ? 'Sending…' : 'Send test'}</button>`
          }
          <button type="button" class="button button--small button--danger-ghost" onClick=${() => onAction('delete', webhook)}
            aria-label=${label('Delete')}>Delete</button>`
      }
      </div>
    </td>
  </tr>`;
}

export function Webhooks({ tenant, role }) {
  const webhooks = useLoad(() => listWebhooks(tenant), [tenant]);
  const [dialog, setDialog] = useState(null);
  const [shownId, setShownId] = useState(null);
  /** What a row is doing now: `{id, kind}` ('test', 'enable'); a resend in the panel: `{id: delivery id, kind}`. */
  const [busy, setBusy] = useState(null);
  const [announcement, setAnnouncement] = useState('');
  const writable = can(role, 'webhooks.write');
  // The panel shows the endpoint as the list has it now (enabled or disabled since it was opened).
  const shown = webhooks.data?.find((w) => w.id === shownId) ?? null;
  const close = () => setDialog(null);
  const done = (message) => {
    setAnnouncement(message);
    webhooks.reload();
  };
  /** `work(arg)`, with `{kind, id}` marking what is busy meanwhile (its button says so). */
  const marked = (kind, idOf, work) => async (arg) => {
    setBusy({ kind, id: idOf(arg) });
    try {
      await work(arg);
    } finally {
      setBusy(null);
    }
  };
  const test = useAction(
    marked(
      'test',
      (w) => w.id,
      async (webhook) => {
        await sendTestEvent(tenant, webhook.id);
        setAnnouncement(`Sent a test event to ${webhook.url}.`);
        // Its delivery shows in the panel within a few seconds.
        setShownId(webhook.id);
      },
    ),
  );
  const enable = useAction(
    marked(
      'enable',
      (w) => w.id,
      async (webhook) => {
        await updateWebhook(tenant, webhook.id, { disabled: false });
        done(`Enabled the endpoint ${webhook.url}.`);
      },
    ),
  );
  /** Sends an attempt's event again; throws what the API refuses (the caller shows it). */
  const resendNow = async (delivery) => {
    const queued = await resendDelivery(tenant, shown.id, delivery.id);
    setAnnouncement(`Sending ${queued.event_id} again to ${shown.url}: it shows as a new attempt.`);
  };
  const resend = useAction(marked('resend', (d) => d.id, resendNow));

  const onAction = (kind, webhook) => {
    if (kind === 'deliveries') setShownId(webhook.id);
    else if (kind === 'test') test.run(webhook);
    else if (kind === 'enable') enable.run(webhook);
    else setDialog({ kind, webhook });
  };

  let dialogView = null;
  if (dialog?.kind === 'create') {
    dialogView = html`<${CreateWebhookDialog} tenant=${tenant} onClose=${close}
      onCreated=${(created) => {
        setDialog({ kind: 'secret', secret: created.secret, title: 'Webhook endpoint added' });
        done(`Added the endpoint ${created.url}.`);
      }} />`;
  } else if (dialog?.kind === 'edit') {
    dialogView = html`<${EditWebhookDialog} tenant=${tenant} webhook=${dialog.webhook} onClose=${close}
      onSaved=${(saved) => {
        close();
        done(`Saved the endpoint ${saved.url}.`);
      }} />`;
  } else if (dialog?.kind === 'disable') {
    dialogView = html`<${DisableWebhookDialog} tenant=${tenant} webhook=${dialog.webhook} onClose=${close}
      onDisabled=${(disabled) => {
        close();
        done(`Disabled the endpoint ${disabled.url}.`);
      }} />`;
  } else if (dialog?.kind === 'rotate') {
    dialogView = html`<${RotateSecretDialog} tenant=${tenant} webhook=${dialog.webhook} onClose=${close}
      onRotated=${(rotated) => {
        setDialog({ kind: 'secret', secret: rotated.secret, title: 'New signing secret' });
        done(`Rotated the signing secret of ${rotated.url}.`);
      }} />`;
  } else if (dialog?.kind === 'delete') {
    dialogView = html`<${DeleteWebhookDialog} tenant=${tenant} webhook=${dialog.webhook} onClose=${close}
      onDeleted=${(deleted) => {
        close();
        if (shownId === deleted.id) setShownId(null);
        done(`Deleted the endpoint ${deleted.url}.`);
      }} />`;
  } else if (dialog?.kind === 'secret') {
    dialogView = html`<${SecretDialog} title=${dialog.title} what="signing secret" label="Signing secret"
      secret=${dialog.secret} onClose=${close}>
      <p class="dialog__text">Your receiver checks each delivery's <code>webhook-signature</code> with it.</p>
    <//>`;
  } else if (dialog?.kind === 'delivery' && shown) {
    const onResend = writable && !shown.disabled ? (d) => resendNow(d).then(close) : null;
    dialogView = html`<${DeliveryDialog} tenant=${tenant} webhook=${shown} deliveryId=${dialog.deliveryId} onClose=${close}
      onResend=${onResend} />`;
  }

  return html`<section>
    <${PageHeader} title="Webhooks" description="Endpoints that Interchange tells when an execution succeeds, fails or is canceled.">
      ${writable && html`<button type="button" class="button button--primary" onClick=${() => setDialog({ kind: 'create' })}>Add endpoint</button>`}
    <//>
    <p class="visually-hidden" role="status" aria-live="polite">${announcement}</p>
    <${ErrorNotice} error=${webhooks.error} title="Could not load the webhooks" />
    <${ErrorNotice} error=${test.error} title="The test event was not sent" />
    <${ErrorNotice} error=${enable.error} title="The endpoint was not enabled" />
    <${ErrorNotice} error=${resend.error} title="The event was not sent again" />
    ${webhooks.loading && !webhooks.data && html`<${Loading} />`}
    ${
      webhooks.data &&
      (webhooks.data.length === 0
        ? html`<${Empty} title="No webhook endpoints yet">
            <p>Add one to hear of executions as they finish, instead of polling.</p>
            ${writable && html`<button type="button" class="button" onClick=${() => setDialog({ kind: 'create' })}>Add your first endpoint</button>`}
          <//>`
        : html`<div class="table-wrap">
            <table class="table table--stack">
              <caption class="visually-hidden">Webhook endpoints of ${tenant}</caption>
              <thead>
                <tr>
                  <th scope="col">Endpoint</th>
                  <th scope="col" class="hide-sm">Events</th>
                  <th scope="col">State</th>
                  <th scope="col" class="hide-md">Created</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${webhooks.data.map(
                  (w) => html`<${WebhookRow} key=${w.id} webhook=${w} writable=${writable} onAction=${onAction}
                    busy=${busy?.id === w.id ? busy.kind : undefined} />`,
                )}
              </tbody>
            </table>
          </div>`)
    }
    ${
      shown &&
      html`<${DeliveriesPanel} key=${shown.id} tenant=${tenant} webhook=${shown} writable=${writable}
        onClose=${() => setShownId(null)} onView=${(d) => setDialog({ kind: 'delivery', deliveryId: d.id })}
        onResend=${resend.run} resendingId=${busy?.kind === 'resend' ? busy.id : null} />`
    }
    ${dialogView}
  </section>`;
}
