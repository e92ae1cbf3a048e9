import { html } from '../lib/html.js';
import { retryFields } from '../lib/resilience-form.js';
import { Field } from './ui.js';

const circuitLabels = {
  closed: ['Closed', 'Calls go through.', 'badge--success'],
  open: [
    'Open',
    'Calls failed one after another: they are refused at once (503 upstream_circuit_open) until a trial call.',
    'badge--danger',
  ],
  half_open: [
    'Half open',
    'The next call is the one trial: its success closes the breaker, its failure opens it again.',
    'badge--warning',
  ],
};

/** The circuit breaker's state as the API reports it (GET /integrations/{id} `circuit`). */
export function CircuitState({ circuit }) {
  const [label, meaning, tone] = circuitLabels[circuit] ?? [circuit, '', ''];
  return html`<p class="circuit" data-circuit=${circuit}>
    Circuit breaker <span class=${`badge ${tone}`}>${label}</span>
    <span class="field__hint">${meaning}</span>
  </p>`;
}

/**
 * The "When the upstream fails" section (docs/resilience.md): the breaker's state, the retry settings and the
 * integration's concurrency cap.
 */
export function ResilienceSection({ circuit, state, errors, onChange, disabled }) {
  const set = (name, value) => onChange((s) => ({ ...s, [name]: value }));
  return html`<fieldset class="fieldset section" disabled=${disabled}>
    <legend>When the upstream fails</legend>
    ${circuit && html`<${CircuitState} circuit=${circuit} />`}
    <p class="field__hint">
      Reads are tried again after no connection, 429, 503, timeouts, resets, 502 and 504; a send only when it surely
      never reached the upstream. Waits are random up to a ceiling that doubles, and honour Retry-After.
    </p>
    <div class="form-row">
      ${retryFields.map(
        (field) => html`<${Field} label=${field.label} hint=${field.hint} error=${errors[`retry.${field.name}`]}>
          ${(a) => html`<input ...${a} type="number" min=${field.min} max=${field.max} value=${state[field.name]}
            onInput=${(e) => set(field.name, e.currentTarget.value)} />`}
        <//>`,
      )}
    </div>
    <${Field} label="Calls at once" hint="At most this many calls of this integration run at once on an instance; empty: no cap."
      error=${errors.max_concurrency}>
      ${(a) => html`<input ...${a} type="number" min="1" max="1000" placeholder="No cap" value=${state.max_concurrency}
        onInput=${(e) => set('max_concurrency', e.currentTarget.value)} />`}
    <//>
  </fieldset>`;
}
