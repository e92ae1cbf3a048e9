import { useId } from 'preact/hooks';
import { html } from '../lib/html.js';

/** A labelled form control; `hint` and `error` are tied to the control for screen readers. */
export function Field({ label, hint, error, children, id: given }) {
  const generated = useId();
  const id = given ?? generated;
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  return html`<div class=${`field${error ? ' field--invalid' : ''}`}>
    <label for=${id}>${label}</label>
    ${children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? 'true' : undefined })}
    ${hint && html`<p class="field__hint" id=${`${id}-hint`}>${hint}</p>`}
    ${error && html`<p class="field__error" id=${`${id}-error`}>${error}</p>`}
  </div>`;
}

/** An API failure (or any error) as one readable notice, with the request id support asks for. */
export function ErrorNotice({ error, title }) {
  if (!error) return null;
  const issues = error.details?.issues;
  return html`<div class="notice notice--error" role="alert">
    <p class="notice__title">${title ?? 'Something went wrong'}</p>
    <p>${error.message}${error.code && html` <code>${error.code}</code>`}</p>
    ${
      Array.isArray(issues) &&
      html`<ul class="notice__issues">
        ${issues.map((issue) => html`<li><code>${issue.path}</code> ${issue.message}</li>`)}
      </ul>`
    }
    ${error.requestId && html`<p class="notice__meta">Request ID <code>${error.requestId}</code></p>`}
  </div>`;
}

/**
 * The end of a form dialog: the failure, if any, announced where it appears; Cancel; and the submit button, which says
 * `busyLabel` while the request runs.
 */
export function FormFooter({ error, failedTitle, busy, disabled, label, busyLabel, onCancel }) {
  return html`<div aria-live="polite">${error && html`<${ErrorNotice} title=${failedTitle} error=${error} />`}</div>
    <div class="dialog__actions">
      <button type="button" class="button" onClick=${onCancel}>Cancel</button>
      <button type="submit" class="button button--primary" disabled=${busy || disabled}>${busy ? busyLabel : label}</button>
    </div>`;
}

export function Badge({ tone = 'neutral', children }) {
  return html`<span class=${`badge badge--${tone}`}>${children}</span>`;
}

export function PageHeader({ title, description, children }) {
  return html`<header class="page-header">
    <div>
      <h1>${title}</h1>
      ${description && html`<p class="page-header__description">${description}</p>`}
    </div>
    ${children && html`<div class="page-header__actions">${children}</div>`}
  </header>`;
}

export function Empty({ title, children }) {
  return html`<div class="empty">
    <p class="empty__title">${title}</p>
    ${children && html`<div class="empty__body">${children}</div>`}
  </div>`;
}

export function Loading({ label = 'Loading…' }) {
  return html`<p class="loading" role="status"><span class="spinner" aria-hidden="true"></span>${label}</p>`;
}

export function JsonBlock({ value, label }) {
  return html`<pre class="code" tabindex="0" aria-label=${label}>${JSON.stringify(value, null, 2)}</pre>`;
}

/** A dotted name (`crm.Service.Port.Op`) that wraps after its dots rather than in the middle of a word. */
export function DottedName({ name }) {
  const parts = name.split('.');
  return parts.map((part, i) => (i < parts.length - 1 ? html`${part}.<wbr />` : part));
}
