import { html } from '../lib/html.js';
import { Field } from './ui.js';

/**
 * A write-only secret: the API only says whether it is set. The stored value is never shown; the user may replace
 * it or clear it. `state`: `{mode: 'keep'|'replace'|'clear', value}`.
 */
export function SecretField({ field, isSet, state, onChange, error }) {
  const replacing = state.mode === 'replace' || !isSet;
  if (!replacing) {
    return html`<div class="field">
      <span class="label" id=${`${field.name}-label`}>${field.label}</span>
      <div class="secret-state" role="group" aria-labelledby=${`${field.name}-label`}>
        ${
          state.mode === 'clear'
            ? html`<span class="badge badge--warning">will be cleared</span>
                <button type="button" class="button button--small" onClick=${() => onChange({ mode: 'keep', value: '' })}>Undo</button>`
            : html`<span class="badge badge--success">set</span>
                <span class="muted">hidden; never shown again</span>
                <button type="button" class="button button--small" onClick=${() => onChange({ mode: 'replace', value: '' })}>Replace</button>
                <button type="button" class="button button--small button--danger-ghost"
                  onClick=${() => onChange({ mode: 'clear', value: '' })}>Clear</button>`
        }
      </div>
      ${error && html`<p class="field__error">${error}</p>`}
    </div>`;
  }
  return html`<${Field} label=${field.label} hint=${isSet ? 'Replaces the stored value.' : field.hint} error=${error}>
    ${(a) => html`<div class="secret-input">
      <input ...${a} type="password" autocomplete="new-password" spellcheck="false" value=${state.value}
        onInput=${(e) => onChange({ mode: 'replace', value: e.currentTarget.value })} />
      ${isSet && html`<button type="button" class="button button--small" onClick=${() => onChange({ mode: 'keep', value: '' })}>Keep current</button>`}
    </div>`}
  <//>`;
}
