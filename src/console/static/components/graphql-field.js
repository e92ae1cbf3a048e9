import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { formatDateTime } from '../lib/format.js';
import { html } from '../lib/html.js';

let editorModule;
/** CodeMirror, cm6-graphql and graphql-js, fetched the first time a GraphQL field is shown. */
const loadEditor = () => {
  editorModule ??= import('../lib/graphql-editor.js');
  return editorModule;
};

/** `text` ending as a sentence does. */
const sentence = (text) => text.replace(/[^.!?]$/, '$&.');

function schemaNote(schema, problem) {
  if (!schema || schema.loading) return 'Reading the integration’s schema…';
  if (problem) return `The schema could not be read: ${sentence(problem)} Only the syntax is checked.`;
  if (!schema.available) {
    const reason = schema.reason ? `: ${sentence(schema.reason)}` : '.';
    return `Schema not available${reason} Only the syntax is checked; nothing is completed.`;
  }
  const read = schema.fetched_at ? ` (read ${formatDateTime(schema.fetched_at)})` : '';
  return `Checked against the integration’s schema${read} as you type; Ctrl-Space completes field and argument names.`;
}

/**
 * A labelled GraphQL document editor (lib/graphql-editor.js). It starts with `value` and takes it again whenever
 * `revision` changes (the document was edited elsewhere); its own edits go to `onChange(text)` and are not pushed
 * back, so a render that lags behind the typing never overwrites it. `schema` is useGraphqlSchema's answer: the
 * document is checked and completed against it when available, else only its syntax is checked. What is wrong is also
 * listed below the editor, by line and column. Should the editor not load, a plain text field stands in.
 */
export function GraphqlField({ label, value, revision, onChange, schema }) {
  const container = useRef(null);
  const [editor, setEditor] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [problem, setProblem] = useState(null);
  const [diagnostics, setDiagnostics] = useState([]);
  const fallbackId = useId();
  // The editor outlives renders; it calls whatever onChange is current.
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    let made;
    let gone = false;
    loadEditor().then(({ createGraphqlEditor, schemaFromSdl }) => {
      if (gone) return;
      made = createGraphqlEditor(container.current, {
        doc: value,
        label,
        onChange: (text) => changed.current(text),
        onDiagnostics: setDiagnostics,
      });
      setEditor({ made, schemaFromSdl });
    }, setLoadError);
    return () => {
      gone = true;
      made?.destroy();
    };
  }, []);

  // `value` is taken only when `revision` says it changed elsewhere.
  useEffect(() => editor?.made.setDocument(value), [editor, revision]);

  const sdl = schema?.available ? schema.sdl : null;
  useEffect(() => {
    if (!editor) return;
    try {
      editor.made.setSchema(sdl ? editor.schemaFromSdl(sdl) : undefined);
      setProblem(null);
    } catch (error) {
      editor.made.setSchema(undefined);
      setProblem(error.message);
    }
  }, [editor, sdl]);

  if (loadError) {
    // The document has no other place: a plain text field stands in for the editor.
    return html`<div class="field">
      <label for=${fallbackId}>${label}</label>
      <textarea id=${fallbackId} class="code-input" rows="6" spellcheck=${false} value=${value}
        aria-describedby=${`${fallbackId}-error`} onInput=${(e) => onChange(e.currentTarget.value)}></textarea>
      <p class="field__error" id=${`${fallbackId}-error`}>
        The editor could not be loaded (${loadError.message}): the document is neither checked nor completed.
      </p>
    </div>`;
  }

  // CodeMirror builds its DOM in `container`, where Preact renders nothing.
  return html`<div class="field">
    <span class="label" onClick=${() => editor?.made.view.focus()}>${label}</span>
    <div ref=${container}></div>
    ${!editor && html`<p class="muted">Loading the editor…</p>`}
    <p class="field__hint">${schemaNote(schema, problem)}</p>
    ${
      diagnostics.length > 0 &&
      html`<ul class="field__error" aria-label="Problems in the document">
        ${diagnostics.map((d) => html`<li>Line ${d.line}, column ${d.column}: ${d.message}</li>`)}
      </ul>`
    }
  </div>`;
}
