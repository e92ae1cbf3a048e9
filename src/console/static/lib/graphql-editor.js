/**
 * The GraphQL document editor of try-it-out: CodeMirror 6 with cm6-graphql, which checks the document against the
 * integration's schema as one types (graphql-js's messages, underlined where they apply) and completes field and
 * argument names. Without a schema only the syntax is checked. Imported with `import()` by components/graphql-field.js,
 * so no other screen loads CodeMirror or graphql-js.
 */
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from '@codemirror/language';
import { forEachDiagnostic, linter, lintKeymap } from '@codemirror/lint';
import { Annotation, EditorState } from '@codemirror/state';
import { drawSelection, EditorView, keymap, lineNumbers } from '@codemirror/view';
import { completion, getSchema, graphqlLanguageSupport, lint, stateExtensions, updateSchema } from 'cm6-graphql';
import { buildSchema, parse } from 'graphql';

/** Marks a change that came from outside (the JSON body), so it is not reported back as an edit. */
const fromOutside = Annotation.define();

/** The SDL of GET /integrations/{id}/schema as a schema the editor checks against. */
export function schemaFromSdl(sdl) {
  return buildSchema(sdl);
}

/** With a schema cm6-graphql's lint reports syntax errors too; without one, this does. */
const syntaxLint = linter((view) => {
  const { doc } = view.state;
  if (getSchema(view.state) || doc.length === 0) return [];
  try {
    parse(doc.toString());
    return [];
  } catch (error) {
    const at = error.locations?.[0];
    const from = at ? Math.min(doc.line(at.line).from + at.column - 1, doc.length) : 0;
    return [{ from, to: Math.min(from + 1, doc.length), severity: 'error', message: error.message }];
  }
});

/** The diagnostics shown, as `{line, column, message}` (1-based), in document order. */
function diagnosticsOf(state) {
  const found = [];
  forEachDiagnostic(state, (diagnostic, from) => {
    const line = state.doc.lineAt(from);
    found.push({ line: line.number, column: from - line.from + 1, message: diagnostic.message });
  });
  return found;
}

const theme = EditorView.theme({
  '&': {
    border: '1px solid var(--border-strong)',
    borderRadius: 'var(--radius)',
    background: 'var(--surface)',
    fontSize: '0.85rem',
  },
  '&.cm-focused': { outline: 'none', boxShadow: 'var(--focus)', borderColor: 'var(--accent)' },
  '.cm-scroller': { fontFamily: 'var(--mono)', minHeight: '9rem', maxHeight: '24rem' },
  '.cm-gutters': { borderRadius: 'var(--radius) 0 0 var(--radius)' },
});

/**
 * A GraphQL editor named `label`, in a shadow root of `host`: there CodeMirror's styles go into a constructed style
 * sheet, which the console's CSP (`style-src 'self'`) allows, where in the document itself they would be an inline
 * <style>. `onChange(text)` follows every edit made in the editor; `onDiagnostics(list)` every change of what it
 * reports. Tab is left to move the focus, as in a form.
 *
 * @example const editor = createGraphqlEditor(div, { doc: '{ me { id } }', label: 'GraphQL document', onChange });
 *          editor.setSchema(schemaFromSdl(sdl));
 */
export function createGraphqlEditor(host, { doc, label, onChange, onDiagnostics }) {
  let reported = '[]';
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap, ...lintKeymap]),
        graphqlLanguageSupport(),
        completion,
        lint,
        syntaxLint,
        stateExtensions(undefined),
        theme,
        // A label's id cannot be referred to from inside a shadow root: the name is given here.
        EditorView.contentAttributes.of({ 'aria-label': label, spellcheck: 'false' }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((tr) => tr.annotation(fromOutside))) {
            onChange?.(update.state.doc.toString());
          }
          const diagnostics = diagnosticsOf(update.state);
          const key = JSON.stringify(diagnostics);
          if (key !== reported) {
            reported = key;
            onDiagnostics?.(diagnostics);
          }
        }),
      ],
    }),
  });
  return {
    view,
    /** Replaces the document with `text` (edited elsewhere) unless it already is that. */
    setDocument(text) {
      if (view.state.doc.toString() === text) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, annotations: fromOutside.of(true) });
    },
    /** Checks and completes against `schema` from now on; `undefined` leaves only the syntax checked. */
    setSchema(schema) {
      updateSchema(view, schema);
    },
    destroy() {
      view.destroy();
    },
  };
}
