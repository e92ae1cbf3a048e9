import { html } from '../lib/html.js';
import { minVersions } from '../lib/tls-form.js';
import { CertificateFacts } from './certificate-facts.js';
import { SecretField } from './secret-field.js';
import { Field } from './ui.js';

/** A PEM textarea: empty, for the API never gives PEM back; what is stored is shown above it by its facts. */
export function PemField({ label, factsLabel, certificates, value, error, onInput, hint = 'PEM.' }) {
  const stored = certificates?.length > 0;
  return html`${stored && html`<${CertificateFacts} label=${factsLabel} certificates=${certificates} />`}
    <${Field} label=${label} error=${error}
      hint=${stored ? 'Leave empty to keep the stored certificates; what you paste replaces them.' : hint}>
      ${(a) => html`<textarea ...${a} class="pem" rows="4" spellcheck=${false} autocomplete="off" value=${value}
        placeholder="-----BEGIN CERTIFICATE-----" onInput=${(e) => onInput(e.currentTarget.value)}></textarea>`}
    <//>`;
}

/** The "TLS" section (`config.tls`): roots to trust, a client certificate for mutual TLS, SNI name, lowest version. */
export function TlsSection({ stored, state, errors, onChange }) {
  const set = (name, value) => onChange((s) => ({ ...s, [name]: value }));
  return html`<fieldset class="fieldset section">
    <legend>TLS</legend>
    <label class="check">
      <input type="checkbox" checked=${state.enabled} onChange=${(e) => set('enabled', e.currentTarget.checked)} />
      Custom TLS settings for this integration
    </label>
    ${!state.enabled && stored && html`<p class="field__hint">Saving now removes the stored TLS settings, client key included.</p>`}
    ${
      state.enabled &&
      html`<div class="section__fields">
        <${PemField} label="CA bundle" factsLabel="Stored CA certificates" certificates=${stored?.ca} value=${state.ca} error=${errors['tls.ca']}
          hint="PEM. When set, only these roots are trusted for this integration, not the system’s."
          onInput=${(v) => set('ca', v)} />
        <${PemField} label="Client certificate" factsLabel="Stored client certificate" certificates=${stored?.client_certificate && [stored.client_certificate]}
          value=${state.client_certificate} error=${errors['tls.client_certificate']} hint="PEM chain, leaf first, for mutual TLS." onInput=${(v) => set('client_certificate', v)} />
        <${SecretField} label="Client key" multiline=${true} isSet=${stored?.client_key_set === true} value=${state.client_key}
          hint="PEM private key of the client certificate." error=${errors['tls.client_key']} onInput=${(v) => set('client_key', v)} />
        <${SecretField} label="Client key password" isSet=${stored?.client_key_password_set === true}
          value=${state.client_key_password} hint="Only for an encrypted key." error=${errors['tls.client_key_password']}
          onInput=${(v) => set('client_key_password', v)} />
        <div class="form-row">
          <${Field} label="Server name" hint="Sent as SNI and verified instead of the URL’s host." error=${errors['tls.server_name']}>
            ${(a) => html`<input ...${a} spellcheck=${false} autocomplete="off" value=${state.server_name}
              onInput=${(e) => set('server_name', e.currentTarget.value)} />`}
          <//>
          <${Field} label="Minimum version" error=${errors['tls.min_version']}>
            ${(a) => html`<select ...${a} value=${state.min_version} onChange=${(e) => set('min_version', e.currentTarget.value)}>
              ${minVersions.map((v) => html`<option value=${v}>${v}</option>`)}
            </select>`}
          <//>
        </div>
      </div>`
    }
  </fieldset>`;
}
