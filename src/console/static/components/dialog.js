import { useEffect, useId, useRef } from 'preact/hooks';
import { html } from '../lib/html.js';

/**
 * A modal dialog on the native <dialog>: focus moves into it and stays there, Escape closes it, and focus returns to
 * what was focused before. `onClose` is called for Escape and the close button; the caller unmounts it.
 */
export function Dialog({ title, description, onClose, children, wide = false }) {
  const ref = useRef(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    const before = document.activeElement;
    dialog.showModal();
    return () => {
      if (dialog.open) dialog.close();
      if (before instanceof HTMLElement && before.isConnected) before.focus();
    };
  }, []);
  const onCancel = (event) => {
    event.preventDefault();
    onClose();
  };
  return html`<dialog ref=${ref} class=${`dialog${wide ? ' dialog--wide' : ''}`} aria-labelledby=${titleId} onCancel=${onCancel}>
    <div class="dialog__header">
      <h2 id=${titleId}>${title}</h2>
      <button type="button" class="icon-button" aria-label="Close" onClick=${onClose}>×</button>
    </div>
    ${description && html`<p class="dialog__description">${description}</p>`}
    <div class="dialog__body">${children}</div>
  </dialog>`;
}

/** "Are you sure?" for what cannot be undone. */
export function ConfirmDialog({ title, children, confirmLabel, busy, onConfirm, onClose, error }) {
  return html`<${Dialog} title=${title} onClose=${onClose}>
    <div class="dialog__text">${children}</div>
    ${error}
    <div class="dialog__actions">
      <button type="button" class="button" onClick=${onClose}>Cancel</button>
      <button type="button" class="button button--danger" disabled=${busy} onClick=${onConfirm}>
        ${busy ? 'Working…' : confirmLabel}
      </button>
    </div>
  <//>`;
}
