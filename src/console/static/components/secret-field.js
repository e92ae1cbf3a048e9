import { html } from '../lib/html.js';
import { Field } from './ui.js';

/**
 * A write-only secret: never prefilled, for the API only says whether one is stored. Left empty, the stored one is
 * kept; whatever is typed replaces it. Removing one is the job of its section (a scheme of "None", TLS switched off).
 * `multiline` for a PEM key: a textarea, which no browser masks, so it too starts empty every time.
 */
export function SecretField({ label, isSet, value, onInput, error, hint, multiline = false, note }) {
  const state = isSet
    ? html`<span class="badge badge--success">set</span> leave empty to keep it; what you type replaces it.`
    : hint;
  const shown = note ? html`${state} ${note}` : state;
  return html`<${Field} label=${label} hint=${shown} error=${error}>
    ${(a) =>
      multiline
        ? html`<textarea ...${a} class="pem" rows="4" spellcheck=${false} autocomplete="off" value=${value}
            placeholder=${isSet ? '(stored; not shown)' : '-----BEGIN PRIVATE KEY-----'}
            onInput=${(e) => onInput(e.currentTarget.value)}></textarea>`
        : html`<input ...${a} type="password" autocomplete="new-password" spellcheck=${false} value=${value}
            placeholder=${isSet ? '(stored; not shown)' : ''}
            onInput=${(e) => onInput(e.currentTarget.value)} />`}
  <//>`;
}
