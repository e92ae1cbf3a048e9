import { authScheme, authSchemes } from '../lib/auth-form.js';
import { html } from '../lib/html.js';
import { SecretField } from './secret-field.js';
import { Field } from './ui.js';

/** A visible field of a scheme: text, URL, or a choice with the API's default first. */
function SchemeField({ field, value, error, onInput }) {
  return html`<${Field} label=${field.label} hint=${field.hint} error=${error}>
    ${(a) =>
      field.options
        ? html`<select ...${a} value=${value} onChange=${(e) => onInput(e.currentTarget.value)}>
            <option value="">Default: ${field.options[0][1]}</option>
            ${field.options.map(([v, text]) => html`<option value=${v}>${text}</option>`)}
          </select>`
        : html`<input ...${a} type=${field.type === 'url' ? 'url' : 'text'} spellcheck=${false} autocomplete="off"
            required=${field.required} placeholder=${field.placeholder} value=${value}
            onInput=${(e) => onInput(e.currentTarget.value)} />`}
  <//>`;
}

/**
 * The "Authentication" section: how Interchange signs in to the upstream (`config.auth`). `stored` is storedAuth()'s
 * answer; a scheme kept in a connector's older field is shown as its scheme, and must have its secret typed again to
 * move.
 */
export function AuthSection({ stored, state, errors, onChange }) {
  const scheme = authScheme(state.type);
  const sameAsStored = scheme && stored.type === scheme.type;
  const setType = (type) => onChange((s) => ({ ...s, type }));
  const setValue = (name, value) => onChange((s) => ({ ...s, values: { ...s.values, [name]: value } }));
  const setSecret = (name, value) => onChange((s) => ({ ...s, secrets: { ...s.secrets, [name]: value } }));
  // Interpolated, so htm keeps the spaces around the field names.
  const older =
    stored.shorthands.length > 0 &&
    html`<span>${'Kept in the older '}${stored.shorthands.map((f, i) => html`${i > 0 ? ' and ' : ''}<code>${f}</code>`)}${' field: a change here moves it to '}<code>auth</code>${' and needs it typed again.'}</span>`;
  return html`<fieldset class="fieldset section">
    <legend>Authentication</legend>
    <p class="field__hint">How Interchange signs in to the upstream. Secrets are write-only: never shown again once saved.</p>
    <${Field} label="Scheme" error=${errors.auth}>
      ${(a) => html`<select ...${a} value=${state.type} onChange=${(e) => setType(e.currentTarget.value)}>
        <option value="">None</option>
        ${authSchemes.map((s) => html`<option value=${s.type}>${s.label}</option>`)}
      </select>`}
    <//>
    ${
      scheme &&
      html`<div class="section__fields">
        ${scheme.fields.map(
          (field) => html`<${SchemeField} field=${field} value=${state.values[field.name]} error=${errors[`auth.${field.name}`]}
            onInput=${(value) => setValue(field.name, value)} />`,
        )}
        ${scheme.secrets.map(
          (secret) => html`<${SecretField} label=${secret.label} isSet=${sameAsStored && stored.set[secret.name] === true}
            value=${state.secrets[secret.name] ?? ''} error=${errors[`auth.${secret.name}`]}
            note=${sameAsStored && stored.set[secret.name] && older}
            onInput=${(value) => setSecret(secret.name, value)} />`,
        )}
      </div>`
    }
    ${!scheme && stored.type && html`<p class="field__hint">Saving with “None” removes the stored credentials.</p>`}
  </fieldset>`;
}
