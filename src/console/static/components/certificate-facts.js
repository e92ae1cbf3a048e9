import { formatDateTime } from '../lib/format.js';
import { html } from '../lib/html.js';

const dayMs = 86_400_000;

/** Expired, or within the 30 days the API's `test` warns about. */
function ExpiryBadge({ notAfter }) {
  const left = Date.parse(notAfter) - Date.now();
  if (left <= 0) return html`<span class="badge badge--danger">expired</span>`;
  if (left <= 30 * dayMs) return html`<span class="badge badge--warning">expires soon</span>`;
  return null;
}

/**
 * What the API shows of stored certificates in place of their PEM: `[{subject, issuer, not_after, fingerprint_sha256}]`.
 */
export function CertificateFacts({ label, certificates }) {
  return html`<div class="certificates">
    <p class="label">${label}</p>
    <ul class="certificates__list" aria-label=${label}>
      ${certificates.map(
        (c) => html`<li class="certificate">
          <dl class="facts">
            <dt>Subject</dt><dd>${c.subject}</dd>
            <dt>Issuer</dt><dd>${c.issuer}</dd>
            <dt>Expires</dt><dd><time datetime=${c.not_after}>${formatDateTime(c.not_after)}</time> <${ExpiryBadge} notAfter=${c.not_after} /></dd>
            <dt>SHA-256</dt><dd><code class="fingerprint">${c.fingerprint_sha256}</code></dd>
          </dl>
        </li>`,
      )}
    </ul>
  </div>`;
}
