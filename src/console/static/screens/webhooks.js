import { useState } from 'preact/hooks';
import { SecretDialog } from '../components/secret.js';
import { Badge, Empty, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { formatDateTime, formatDuration, formatRelative } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { useAction } from '../lib/use-action.js';
import { useLoad } from '../lib/use-load.js';
import { usePolling } from '../lib/use-polling.js';
import { listDeliveries, listWebhooks, sendTestEvent } from '../lib/webhooks.js';
import { CreateWebhookDialog, DeleteWebhookDialog } from './webhook-dialogs.js';

/** How often an open deliveries panel is read again: retries and test events show up by themselves. */
const deliveriesPollMs = 3000;

const dash = html`<span class="muted">—</span>`;

function DeliveriesPanel({ tenant, webhook, onClose }) {
  const deliveries = useLoad(() => listDeliveries(tenant, webhook.id), [tenant, webhook.id]);
  usePolling(() => !deliveries.loading && deliveries.reload(), deliveriesPollMs);
  const list = deliveries.data;
  return html`<section class="card panel" aria-labelledby="deliveries-heading">
    <div class="panel__header">
      <h2 id="deliveries-heading">Deliveries to <span class="break">${webhook.url}</span></h2>
      <button type="button" class="button button--small" onClick=${onClose}>Close</button>
    </div>
    <p class="muted">The most recent attempts, newest first. A failed one is tried again with growing delays.</p>
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
            </tr>
          </thead>
          <tbody>
            ${list.map(
              (d) => html`<tr key=${`${d.event_id}/${d.attempt}`}>
                <th scope="row" title=${formatDateTime(d.created_at)}>${formatRelative(d.created_at)}</th>
                <td><code>${d.event_type}</code><span class="cell-sub"><code>${d.event_id}</code></span></td>
                <td class="num">${d.attempt}</td>
                <td class="num">
                  ${d.http_status === null || d.http_status === undefined ? dash : html`<${Badge} tone=${d.http_status < 300 ? 'success' : 'danger'}>${d.http_status}<//>`}
                </td>
                <td class="hide-sm num">${formatDuration(d.duration_ms)}</td>
                <td class="hide-md">${d.error ? html`<span class="break">${d.error}</span>` : dash}</td>
                <td class="hide-md" title=${d.next_attempt_at ? formatDateTime(d.next_attempt_at) : ''}>
                  ${d.next_attempt_at ? formatRelative(d.next_attempt_at) : dash}
                </td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }
  </section>`;
}

function WebhookRow({ webhook, writable, onAction, testing }) {
  return html`<tr>
    <th scope="row" title=${webhook.id}>
      <span class="cell-title break">${webhook.url}</span>
      ${webhook.description && html`<span class="cell-sub">${webhook.description}</span>`}
    </th>
    <td class="hide-sm">
      <div class="scopes">${webhook.events.map((e) => html`<code class="scope">${e}</code>`)}</div>
    </td>
    <td>${webhook.disabled ? html`<${Badge} tone="danger">Disabled<//>` : html`<${Badge} tone="success">Active<//>`}</td>
    <td class="hide-md" title=${formatDateTime(webhook.created_at)}>${formatRelative(webhook.created_at)}</td>
    <td class="actions">
      <button type="button" class="button button--small" onClick=${() => onAction('deliveries', webhook)}
        aria-label=${`Deliveries to ${webhook.url}`}>Deliveries</button>
      ${
        writable &&
        html`<button type="button" class="button button--small" onClick=${() => onAction('test', webhook)} disabled=${testing}
            aria-label=${`Send a test event to ${webhook.url}`}>${testing ? 'Sending…' : 'Send test event'}</button>
          <button type="button" class="button button--small button--danger-ghost" onClick=${() => onAction('delete', webhook)}
            aria-label=${`Delete ${webhook.url}`}>Delete</button>`
      }
    </td>
  </tr>`;
}

export function Webhooks({ tenant, role }) {
  const webhooks = useLoad(() => listWebhooks(tenant), [tenant]);
  const [dialog, setDialog] = useState(null);
  const [shown, setShown] = useState(null);
  const [testingId, setTestingId] = useState(null);
  const [announcement, setAnnouncement] = useState('');
  const writable = can(role, 'webhooks.write');
  const close = () => setDialog(null);
  const done = (message) => {
    setAnnouncement(message);
    webhooks.reload();
  };
  const test = useAction(async (webhook) => {
    setTestingId(webhook.id);
    try {
      await sendTestEvent(tenant, webhook.id);
      setAnnouncement(`Sent a test event to ${webhook.url}.`);
      // Its delivery shows in the panel within a few seconds.
      setShown(webhook);
    } finally {
      setTestingId(null);
    }
  });

  const onAction = (kind, webhook) => {
    if (kind === 'deliveries') setShown(webhook);
    else if (kind === 'test') test.run(webhook);
    else setDialog({ kind, webhook });
  };

  let dialogView = null;
  if (dialog?.kind === 'create') {
    dialogView = html`<${CreateWebhookDialog} tenant=${tenant} onClose=${close}
      onCreated=${(created) => {
        setDialog({ kind: 'secret', secret: created.secret });
        done(`Added the endpoint ${created.url}.`);
      }} />`;
  } else if (dialog?.kind === 'delete') {
    dialogView = html`<${DeleteWebhookDialog} tenant=${tenant} webhook=${dialog.webhook} onClose=${close}
      onDeleted=${(deleted) => {
        close();
        if (shown?.id === deleted.id) setShown(null);
        done(`Deleted the endpoint ${deleted.url}.`);
      }} />`;
  } else if (dialog?.kind === 'secret') {
    dialogView = html`<${SecretDialog} title="Webhook endpoint added" what="signing secret" label="Signing secret"
      secret=${dialog.secret} onClose=${close}>
      <p class="dialog__text">Your receiver checks each delivery's <code>webhook-signature</code> with it.</p>
    <//>`;
  }

  return html`<section>
    <${PageHeader} title="Webhooks" description="Endpoints that Interchange tells when an execution succeeds, fails or is canceled.">
      ${writable && html`<button type="button" class="button button--primary" onClick=${() => setDialog({ kind: 'create' })}>Add endpoint</button>`}
    <//>
    <p class="visually-hidden" role="status" aria-live="polite">${announcement}</p>
    <${ErrorNotice} error=${webhooks.error} title="Could not load the webhooks" />
    <${ErrorNotice} error=${test.error} title="The test event was not sent" />
    ${webhooks.loading && !webhooks.data && html`<${Loading} />`}
    ${
      webhooks.data &&
      (webhooks.data.length === 0
        ? html`<${Empty} title="No webhook endpoints yet">Add one to hear of executions as they finish, instead of polling.<//>`
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
                    testing=${testingId === w.id} />`,
                )}
              </tbody>
            </table>
          </div>`)
    }
    ${shown && html`<${DeliveriesPanel} key=${shown.id} tenant=${tenant} webhook=${shown} onClose=${() => setShown(null)} />`}
    ${dialogView}
  </section>`;
}
