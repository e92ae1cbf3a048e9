import { Dialog } from '../components/dialog.js';
import { Badge, ErrorNotice, JsonBlock, Loading } from '../components/ui.js';
import { formatDateTime, formatDuration } from '../lib/format.js';
import { html } from '../lib/html.js';
import { useAction } from '../lib/use-action.js';
import { useLoad } from '../lib/use-load.js';
import { getDelivery } from '../lib/webhooks.js';

/** The receiver's answer as kept: at most its first 4 KiB (docs/limits.md#webhooks). */
function ResponseBody({ delivery }) {
  if (delivery.response_body === null) {
    return html`<p class="muted">No answer came${delivery.error ? ': see the error above' : ''}.</p>`;
  }
  if (delivery.response_body === '') return html`<p class="muted">The answer had an empty body.</p>`;
  return html`<pre class="code" tabindex="0" aria-label="Response body">${delivery.response_body}</pre>
    <p class="field__hint">At most the first 4 KiB of the answer is kept.</p>`;
}

/**
 * One attempt in full: what was sent (the event's body, exactly) and what came back (the status and the start of the
 * answer). `onResend` (absent for who may not change webhooks, or a disabled endpoint) sends the event again.
 */
export function DeliveryDialog({ tenant, webhook, deliveryId, onClose, onResend }) {
  const delivery = useLoad(() => getDelivery(tenant, webhook.id, deliveryId), [tenant, webhook.id, deliveryId]);
  const resend = useAction(async () => onResend(delivery.data));
  const d = delivery.data;
  return html`<${Dialog} title="Delivery attempt" description=${html`<code>${deliveryId}</code> to <span class="break">${webhook.url}</span>`}
    onClose=${onClose} wide>
    <${ErrorNotice} error=${delivery.error} title="Could not load the attempt" />
    ${delivery.loading && !d && html`<${Loading} />`}
    ${
      d &&
      html`<dl class="details">
          <div><dt>Event</dt><dd><code>${d.event_type}</code> <code>${d.event_id}</code></dd></div>
          <div><dt>Attempt</dt><dd>${d.attempt}, sent ${formatDateTime(d.created_at, { seconds: true })}</dd></div>
          <div>
            <dt>Answer</dt>
            <dd>
              ${d.http_status === null ? html`<span class="muted">none</span>` : html`<${Badge} tone=${d.http_status < 300 ? 'success' : 'danger'}>HTTP ${d.http_status}<//>`}
              ${' '}in ${formatDuration(d.duration_ms)}
            </dd>
          </div>
          ${d.error && html`<div><dt>Error</dt><dd class="break">${d.error}</dd></div>`}
        </dl>
        <h3 class="delivery__heading">Payload</h3>
        ${
          d.payload === null
            ? html`<p class="muted">The event is no longer kept (30 days).</p>`
            : html`<${JsonBlock} value=${d.payload} label="Payload" />`
        }
        <h3 class="delivery__heading">Response body</h3>
        <${ResponseBody} delivery=${d} />
        <${ErrorNotice} error=${resend.error} title="The event was not sent again" />
        <div class="dialog__actions">
          <button type="button" class="button" onClick=${onClose}>Close</button>
          ${
            onResend &&
            html`<button type="button" class="button button--primary" disabled=${resend.busy} onClick=${resend.run}>
              ${resend.busy ? 'Resending…' : 'Resend event'}
            </button>`
          }
        </div>`
    }
  <//>`;
}
