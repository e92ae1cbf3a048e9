import { html } from '../lib/html.js';
import { Field } from './ui.js';

/**
 * Try-it-out's choice of a SOAP integration's catalogue entry (useCatalogue's answer in `catalogue`): choosing one
 * calls `onPick(entry)`, which fills the request from it.
 */
export function CataloguePicker({ catalogue, value, onPick }) {
  const entries = catalogue?.entries ?? [];
  let hint = 'Fills the body: receive for a read, send for a write, and params with a placeholder for each required one.';
  if (!catalogue || catalogue.loading) hint = 'Reading the WSDL’s operations…';
  else if (catalogue.entries?.length === 0) hint = 'The WSDL lists no operations.';
  const error = catalogue?.error && `The operations could not be read: ${catalogue.error.message}`;
  return html`<${Field} label="WSDL operation" hint=${error ? undefined : hint} error=${error}>
    ${(a) => html`<select ...${a} value=${value} disabled=${entries.length === 0}
      onChange=${(e) => onPick(entries.find((entry) => entry.name === e.currentTarget.value))}>
      <option value="">${entries.length > 0 ? 'Choose an operation…' : '—'}</option>
      ${entries.map((entry) => html`<option value=${entry.name}>${entry.name} (${entry.kind})</option>`)}
    </select>`}
  <//>`;
}
