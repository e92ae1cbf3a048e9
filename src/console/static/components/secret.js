import { useRef, useState } from 'preact/hooks';
import { html } from '../lib/html.js';
import { Dialog } from './dialog.js';

/**
 * A new secret (a key's, a webhook endpoint's signing secret), shown this once: the API never returns it again and the
 * console keeps no copy once the dialog closes. Copy uses the clipboard API; where that is refused the text is
 * selected for the user to copy. `what` names it in the warning, `label` labels the field.
 */
export function SecretDialog({ title, secret, onClose, children, what = 'key', label = 'Secret key' }) {
  const input = useRef(null);
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setStatus('Copied to the clipboard.');
    } catch {
      input.current.focus();
      input.current.select();
      setStatus('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return html`<${Dialog} title=${title} onClose=${onClose}>
    <div class="notice notice--warning">
      <p class="notice__title">Copy this ${what} now</p>
      <p>This is the only time the secret is shown. Store it somewhere safe, such as a secrets manager.</p>
    </div>
    <label class="label" for="new-secret">${label}</label>
    <div class="secret">
      <input ref=${input} id="new-secret" class="secret__value" readonly value=${secret} onFocus=${(e) => e.currentTarget.select()} />
      <button type="button" class="button button--primary" onClick=${copy}>Copy</button>
    </div>
    <p class="copy-status" role="status" aria-live="polite">${status}</p>
    ${children}
    <div class="dialog__actions">
      <button type="button" class="button" onClick=${onClose}>I have stored it</button>
    </div>
  <//>`;
}
