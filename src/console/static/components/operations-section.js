import { useEffect, useState } from 'preact/hooks';
import { catalogOf, isRawSoap, listOperations } from '../lib/catalog.js';
import { html } from '../lib/html.js';
import { keepingFocus } from '../lib/keep-focus.js';
import { useAction } from '../lib/use-action.js';
import { Badge, DottedName, Empty, ErrorNotice, JsonBlock, Loading } from './ui.js';

const pageSize = 50;

function KindBadge({ kind }) {
  return kind === 'read' ? html`<${Badge} tone="info">read<//>` : html`<${Badge} tone="warning">write<//>`;
}

function Operation({ entry, kind, readOnlyToggle }) {
  return html`<li class="operation">
    <div class="operation__head">
      <h3 class="operation__name"><code><${DottedName} name=${entry.name} /></code></h3>
      <${KindBadge} kind=${kind} />
      ${readOnlyToggle}
    </div>
    ${
      entry.description
        ? html`<p class="operation__description">${entry.description}</p>`
        : html`<p class="operation__description muted">No description.</p>`
    }
    <details class="operation__schemas">
      <summary>Input and output schema</summary>
      <div class="operation__schemas-body">
        <h4>Input</h4>
        <${JsonBlock} value=${entry.input_schema} label=${`Input schema of ${entry.name}`} />
        <h4>Output</h4>
        <${JsonBlock} value=${entry.output_schema} label=${`Output schema of ${entry.name}`} />
      </div>
    </details>
  </li>`;
}

/** Why an integration has no entries, in its connector's terms. */
function EmptyCatalogue({ integration }) {
  if (isRawSoap(integration)) {
    return html`<${Empty} title="No catalogue in raw mode">
      <p>
        This integration calls its endpoint without a WSDL (raw mode): each call names its method and namespace, and
        nothing describes the operations. Point the endpoint URL at the WSDL (<code>?wsdl</code> or a <code>.wsdl</code> path)
        to list them here and offer them to AI agents.
      </p>
    <//>`;
  }
  if (integration.connector === 'graphql-1.0.0') {
    return html`<${Empty} title="No operations yet">
      <p>
        A GraphQL integration’s operations are its saved documents (<code>catalog.documents</code>, through the API),
        and its root fields when “Root fields as operations” is on.
      </p>
    <//>`;
  }
  return html`<${Empty} title="No operations">The upstream describes none.<//>`;
}

function intro(soap, writable) {
  if (!soap) {
    return 'Its saved documents (and root fields, when they are operations), with JSON Schemas of the variables each takes and of the data it answers.';
  }
  const marking = writable ? 'each is a write until you mark it read-only.' : 'each is a write unless marked read-only.';
  return `The WSDL’s operations, with JSON Schemas of the params each takes and of the data it answers. A WSDL cannot say which change nothing: ${marking}`;
}

/**
 * The integration's operation catalogue (GET /integrations/{id}/operations), a page at a time: each entry's name,
 * kind, description and schemas. A SOAP entry can be marked read-only (`catalog.read_operations`: a WSDL cannot say
 * what changes nothing) by a role that may write integrations; the mark saves at once through `save`.
 */
export function OperationsSection({ tenant, integration, writable, saving, save, onReload }) {
  const soap = integration.connector === 'soap-1.0.0';
  const rawSoap = isRawSoap(integration);
  const readOperations = catalogOf(integration).read_operations;
  const [entries, setEntries] = useState(null);
  const [nextCursor, setNextCursor] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [loading, setLoading] = useState(true);
  const [attempt, setAttempt] = useState(0);
  const [status, setStatus] = useState('');
  // A change of what makes the catalogue (another WSDL or endpoint, GraphQL documents or root fields, descriptions)
  // lists the operations anew; a read-only mark does not (its kind shows at once).
  const { documents, root_fields: rootFields, descriptions } = catalogOf(integration);
  const sourceKey = JSON.stringify([integration.config ?? {}, documents, rootFields, descriptions]);

  useEffect(() => {
    let current = true;
    setLoading(true);
    setLoadError(null);
    listOperations(tenant, integration.id, { limit: pageSize }).then(
      (page) => {
        if (!current) return;
        setEntries(page.entries);
        setNextCursor(page.nextCursor);
        setLoading(false);
      },
      (failure) => {
        if (!current) return;
        setLoadError(failure);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [tenant, integration.id, sourceKey, attempt]);

  const loadMore = async () => {
    setLoading(true);
    setLoadError(null);
    try {
      const page = await listOperations(tenant, integration.id, { cursor: nextCursor, limit: pageSize });
      setEntries((shown) => [...shown, ...page.entries]);
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setLoadError(failure);
    } finally {
      setLoading(false);
    }
  };

  // The mark being saved shows meanwhile; a failure takes it back.
  const [pending, setPending] = useState(null);
  const mark = useAction(async (name, readOnly) => {
    setStatus('');
    setPending({ name, readOnly });
    const names = readOnly ? [...new Set([...readOperations, name])] : readOperations.filter((n) => n !== name);
    try {
      await keepingFocus(() => save({ read_operations: names }));
    } finally {
      setPending(null);
    }
    setStatus(readOnly ? `${name} is read-only now.` : `${name} counts as a write now.`);
  });
  const isReadOnly = (name) => (pending?.name === name ? pending.readOnly : readOperations.includes(name));

  // A SOAP entry's kind follows read_operations (the server's rule), so a mark shows at once.
  const kindOf = (entry) => (soap ? (isReadOnly(entry.name) ? 'read' : 'write') : entry.kind);
  const toggleFor = (entry) =>
    soap &&
    writable &&
    html`<label class="check operation__read">
      <input type="checkbox" checked=${isReadOnly(entry.name)} disabled=${saving}
        aria-label=${`Read-only: ${entry.name}`} onChange=${(e) => mark.run(entry.name, e.currentTarget.checked)} />
      Read-only
    </label>`;

  return html`<section class="card" aria-labelledby="operations-heading">
    <h2 id="operations-heading">Operations</h2>
    ${!rawSoap && html`<p class="muted">${intro(soap, writable)}</p>`}
    <div aria-live="polite">
      ${mark.error && html`<${ErrorNotice} title="Not saved" error=${mark.error} />`}
      ${mark.error?.stale && html`<button type="button" class="button" onClick=${onReload}>Reload the current version</button>`}
      ${status && !mark.error && html`<p class="notice notice--success" role="status">${status}</p>`}
    </div>
    ${entries?.length === 0 && html`<${EmptyCatalogue} integration=${integration} />`}
    ${
      entries?.length > 0 &&
      html`<ul class="operations" aria-label=${`Operations of ${integration.name || integration.id}`}>
        ${entries.map((entry) => html`<${Operation} key=${entry.name} entry=${entry} kind=${kindOf(entry)} readOnlyToggle=${toggleFor(entry)} />`)}
      </ul>`
    }
    ${loading && html`<${Loading} label="Reading the operations…" />`}
    ${
      loadError &&
      html`<${ErrorNotice} title="Could not read the operations" error=${loadError} />
        <button type="button" class="button" onClick=${() => (entries && nextCursor ? loadMore() : setAttempt((n) => n + 1))}>
          Try again
        </button>`
    }
    ${
      nextCursor &&
      !loading &&
      !loadError &&
      html`<div class="more">
        <button type="button" class="button" onClick=${loadMore}>Load more</button>
      </div>`
    }
  </section>`;
}
