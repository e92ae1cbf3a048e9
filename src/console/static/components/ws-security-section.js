import { html } from '../lib/html.js';
import { digestAlgorithms, keyReferences, signatureAlgorithms } from '../lib/ws-security-form.js';
import { SecretField } from './secret-field.js';
import { PemField } from './tls-section.js';
import { Field } from './ui.js';

function Choice({ label, value, options, error, onInput }) {
  return html`<${Field} label=${label} error=${error}>
    ${(a) => html`<select ...${a} value=${value} onChange=${(e) => onInput(e.currentTarget.value)}>
      ${options.map((o) => (Array.isArray(o) ? html`<option value=${o[0]}>${o[1]}</option>` : html`<option value=${o}>${o}</option>`))}
    </select>`}
  <//>`;
}

/** A part of the header block, switched on by its checkbox; switched off, a stored part is removed on save. */
function Part({ label, part, stored, onToggle, children }) {
  return html`<div class="subsection">
    <label class="check">
      <input type="checkbox" checked=${part.enabled} onChange=${(e) => onToggle(e.currentTarget.checked)} />
      ${label}
    </label>
    ${!part.enabled && stored && html`<p class="field__hint">Saving now removes it.</p>`}
    ${part.enabled && html`<div class="section__fields">${children}</div>`}
  </div>`;
}

/** The "WS-Security" section (SOAP, `config.ws_security`): a wsse:Security block on every call. */
export function WsSecuritySection({ stored, state, errors, onChange }) {
  const set = (part, field, value) => onChange((s) => ({ ...s, [part]: { ...s[part], [field]: value } }));
  const error = (path) => errors[`ws_security.${path}`];
  const token = state.username_token;
  const signature = state.signature;
  const storedSignature = stored?.signature;
  return html`<fieldset class="fieldset section">
    <legend>WS-Security</legend>
    <p class="field__hint">A <code>wsse:Security</code> header on every call (not on the connection test).</p>
    <${Part} label="UsernameToken" part=${token} stored=${stored?.username_token} onToggle=${(on) => set('username_token', 'enabled', on)}>
      <div class="form-row">
        <${Field} label="Username" error=${error('username_token.username')}>
          ${(a) => html`<input ...${a} spellcheck=${false} autocomplete="off" value=${token.username}
            onInput=${(e) => set('username_token', 'username', e.currentTarget.value)} />`}
        <//>
        <${Choice} label="Password type" value=${token.password_type} error=${error('username_token.password_type')}
          options=${[['text', 'Text'], ['digest', 'Digest']]} onInput=${(v) => set('username_token', 'password_type', v)} />
      </div>
      <${SecretField} label="Password" isSet=${stored?.username_token?.password_set === true} value=${token.password}
        error=${error('username_token.password')} onInput=${(v) => set('username_token', 'password', v)} />
    <//>
    <${Part} label="Timestamp" part=${state.timestamp} stored=${stored?.timestamp} onToggle=${(on) => set('timestamp', 'enabled', on)}>
      <${Field} label="Time to live (seconds)" error=${error('timestamp.ttl_seconds')}>
        ${(a) => html`<input ...${a} type="number" min="1" max="86400" value=${state.timestamp.ttl_seconds}
          onInput=${(e) => set('timestamp', 'ttl_seconds', e.currentTarget.value)} />`}
      <//>
    <//>
    <${Part} label="Signature" part=${signature} stored=${storedSignature} onToggle=${(on) => set('signature', 'enabled', on)}>
      <${PemField} label="Signing certificate" factsLabel="Stored signing certificate" certificates=${storedSignature?.certificate && [storedSignature.certificate]}
        value=${signature.certificate} error=${error('signature.certificate')} hint="PEM X.509."
        onInput=${(v) => set('signature', 'certificate', v)} />
      <${SecretField} label="Signing key" multiline=${true} isSet=${storedSignature?.private_key_set === true}
        value=${signature.private_key} hint="PEM private key, RSA or EC." error=${error('signature.private_key')}
        onInput=${(v) => set('signature', 'private_key', v)} />
      <${SecretField} label="Signing key password" isSet=${storedSignature?.private_key_password_set === true}
        value=${signature.private_key_password} hint="Only for an encrypted key." error=${error('signature.private_key_password')}
        onInput=${(v) => set('signature', 'private_key_password', v)} />
      <div class="form-row">
        <${Choice} label="Signature algorithm" value=${signature.signature_algorithm} options=${signatureAlgorithms}
          error=${error('signature.signature_algorithm')} onInput=${(v) => set('signature', 'signature_algorithm', v)} />
        <${Choice} label="Digest algorithm" value=${signature.digest_algorithm} options=${digestAlgorithms}
          error=${error('signature.digest_algorithm')} onInput=${(v) => set('signature', 'digest_algorithm', v)} />
      </div>
      <${Choice} label="Key reference" value=${signature.key_reference} options=${keyReferences}
        error=${error('signature.key_reference')} onInput=${(v) => set('signature', 'key_reference', v)} />
    <//>
  </fieldset>`;
}
