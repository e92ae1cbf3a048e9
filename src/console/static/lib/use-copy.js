import { useState } from 'preact/hooks';

/** Selects the text of `element` (an input's value, or the text of any other element) for the person to copy. */
function selectContents(element) {
  element.focus();
  if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) {
    element.select();
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

/**
 * Copying `text` to the clipboard: `{copy, status}`, `status` being what to announce. Where the clipboard is refused,
 * what `target` (a ref) holds is selected instead, for Ctrl+C.
 */
export function useCopy(text, target) {
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setStatus('Copied to the clipboard.');
    } catch {
      if (target?.current) selectContents(target.current);
      setStatus('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return { copy, status };
}
