import { useEffect, useRef, useState } from 'preact/hooks';
import { CataloguePicker } from '../components/catalogue-picker.js';
import { GraphqlField } from '../components/graphql-field.js';
import { Badge, Empty, ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { request } from '../lib/api.js';
import { isWsdlUrl, paramsTemplate, soapCallOf } from '../lib/catalog.js';
import { documentField, exampleBody, operations } from '../lib/connectors.js';
import { curlCommand, executePath } from '../lib/curl.js';
import { formatDuration } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useAction } from '../lib/use-action.js';
import { useCatalogue } from '../lib/use-catalogue.js';
import { useCopy } from '../lib/use-copy.js';
import { useGraphqlSchema } from '../lib/use-graphql-schema.js';
import { integrationLabel, loadAllIntegrations } from './integrations.js';

/** `upstream;dur=12.3, interchange;dur=1.2` → [{name, dur}]. */
function parseServerTiming(header) {
  if (!header) return [];
  return header.split(',').map((entry) => {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
    return { name, dur: dur ? Number(dur.slice(4)) : null };
  });
}

/**
 * The try-it-out body of `fields`: without a GraphQL document's field (`docField`), which its own editor holds and the
 * request takes from there, so the document is shown once.
 */
const bodyText = (fields, docField) => {
  const { [docField]: _document, ...rest } = fields;
  return JSON.stringify(docField ? rest : fields, null, 2);
};

/** The JSON object in `text`, or null when it is not one (the person may be halfway through an edit). */
function parseObject(text) {
  try {
    const value = JSON.parse(text || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

function Response({ result, tenant }) {
  const timings = parseServerTiming(result.headers.get('server-timing'));
  const replayed = result.headers.get('idempotent-replayed') === 'true';
  const queued = result.status === 202 ? result.body?.data?.execution_id : null;
  // A synchronous answer names the execution it was recorded as (a replayed one does not).
  const recorded = queued ? null : result.headers.get('x-execution-id');
  return html`<div class="card response">
    <div class="response__meta">
      <${Badge} tone=${result.ok ? 'success' : 'danger'}>HTTP ${result.status}<//>
      ${replayed && html`<${Badge} tone="info">replayed<//>`}
      <span class="muted">Round trip ${formatDuration(result.ms)}</span>
      ${result.body?.request_id && html`<span class="muted">Request <code>${result.body.request_id}</code></span>`}
    </div>
    ${
      timings.length > 0 &&
      html`<div class="timings" aria-label="Server-Timing">
        <span class="label">Server-Timing</span>
        ${timings.map((t) => html`<span class="timing"><code>${t.name}</code> ${t.dur === null ? '' : formatDuration(Math.round(t.dur))}</span>`)}
      </div>`
    }
    ${
      queued &&
      html`<p class="response__queued">
        Queued as <${Link} href=${tenantPath(tenant, 'executions', queued)}>execution <code>${queued}</code><//>: its page
        follows it and shows the result.
      </p>`
    }
    ${
      recorded &&
      html`<p class="response__queued">
        Recorded as <${Link} href=${tenantPath(tenant, 'executions', recorded)}>execution <code>${recorded}</code><//>.
      </p>`
    }
    ${!result.ok && result.body?.error && html`<p class="response__error"><code>${result.body.error.code}</code> ${result.body.error.message}</p>`}
    <pre class="code code--tall" tabindex="0" aria-label="Response body">${result.body ? JSON.stringify(result.body, null, 2) : result.text}</pre>
  </div>`;
}

/** The request the form describes: `{fields, headers}` (what is sent, `operation` included), or `{error}` for its body. */
function requestOf({ body, docField, graphqlDocument, operation, idempotencyKey, runAsync }) {
  let fields;
  try {
    fields = JSON.parse(body || '{}');
  } catch (problem) {
    return { error: problem.message };
  }
  if (!fields || typeof fields !== 'object' || Array.isArray(fields)) return { error: 'The body must be a JSON object.' };
  const headers = {};
  if (idempotencyKey.trim()) headers['Idempotency-Key'] = idempotencyKey.trim();
  if (runAsync) headers.Prefer = 'respond-async';
  // The chosen operation, and what the editor holds, are what is sent.
  const { operation: _typed, ...rest } = fields;
  return { fields: { operation, ...rest, ...(docField && { [docField]: graphqlDocument }) }, headers };
}

/**
 * The form's actions (`children`) after "Copy as curl": the request as the form describes it, with `$IX_API_KEY` where
 * a key goes, shown below as it is copied.
 */
function RequestActions({ command, onInvalid, children }) {
  const shown = useRef(null);
  const block = useRef(null);
  const { copy, status } = useCopy(command ?? '', block);
  const onClick = () => {
    if (command === null) return onInvalid();
    shown.current.open = true;
    return copy();
  };
  return html`<div class="form__actions">
    <p class="copy-status" role="status">${status}</p>
    <button type="button" class="button" onClick=${onClick}>Copy as curl</button>
    ${children}
  </div>
  <details ref=${shown} class="curl">
    <summary>The request as curl</summary>
    ${
      command === null
        ? html`<p class="muted">Once the body above is a JSON object, the request shows here.</p>`
        : html`<pre ref=${block} class="code" tabindex="0" aria-label="The request as curl">${command}</pre>`
    }
    <p class="field__hint">It sends an API key of this tenant from <code>$IX_API_KEY</code>, never your sign-in.</p>
  </details>`;
}

export function TryItOut({ tenant, role }) {
  const [integrations, setIntegrations] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [integrationId, setIntegrationId] = useState('');
  const [operation, setOperation] = useState('test');
  // The body's fields as JSON text; a GraphQL document (receive, send) is not among them but in its own editor.
  const [body, setBody] = useState('{}');
  const [graphqlDocument, setGraphqlDocument] = useState('');
  // Counts the document's edits made outside its editor (an example, a document pasted into the body), which the
  // editor then takes.
  const [documentRevision, setDocumentRevision] = useState(0);
  const [moved, setMoved] = useState('');
  // The catalogue entry the body was filled from (a SOAP integration in WSDL mode), or ''.
  const [entryName, setEntryName] = useState('');
  const [idempotencyKey, setIdempotencyKey] = useState('');
  const [runAsync, setRunAsync] = useState(false);
  const [bodyError, setBodyError] = useState(null);
  const [result, setResult] = useState(null);
  const {
    busy,
    error,
    run: execute,
  } = useAction(async ({ fields, headers }) => {
    setResult(await request(executePath(integrationId), { method: 'POST', tenant, headers, body: fields }));
  });

  useEffect(() => {
    loadAllIntegrations(tenant).then((list) => {
      setIntegrations(list);
      if (list[0]) {
        setIntegrationId(list[0].id);
        setBody(bodyText(exampleBody(list[0].connector, 'test')));
      }
    }, setLoadError);
  }, [tenant]);

  const integration = integrations?.find((i) => i.id === integrationId);
  const docField = documentField(integration?.connector, operation);
  const schema = useGraphqlSchema(tenant, docField ? integrationId : null);
  const wsdlMode = integration?.connector === 'soap-1.0.0' && isWsdlUrl(integration.config?.endpoint_url ?? '');
  const catalogue = useCatalogue(tenant, wsdlMode ? integrationId : null);

  if (loadError) return html`<${ErrorNotice} error=${loadError} title="Could not load the integrations" />`;
  if (!integrations) return html`<${Loading} />`;
  const header = html`<${PageHeader} title="Try it out"
    description="Run an operation through an integration, exactly as a caller of the execute endpoint would." />`;
  if (integrations.length === 0) {
    return html`<section>${header}<${Empty} title="No integrations to run">
      ${
        can(role, 'integrations.write')
          ? html`<${Link} href=${tenantPath(tenant, 'new-integration')}>Create an integration<//> first.`
          : 'An owner, admin or developer of this tenant can create one.'
      }
    <//></section>`;
  }
  const executable = can(role, 'integrations.execute');
  const choose = (id, op) => {
    const next = integrations.find((i) => i.id === id);
    const example = exampleBody(next?.connector, op);
    const field = documentField(next?.connector, op);
    setIntegrationId(id);
    setOperation(op);
    setBody(bodyText(example, field));
    setGraphqlDocument(example[field] ?? '');
    setDocumentRevision((n) => n + 1);
    setMoved('');
    setEntryName('');
    setBodyError(null);
  };
  /** A catalogue entry's call: receive for a read, send for a write, and a params template from its input schema. */
  const pick = (entry) => {
    setEntryName(entry?.name ?? '');
    if (!entry) return;
    setOperation(entry.kind === 'read' ? 'receive' : 'send');
    setBody(JSON.stringify({ ...soapCallOf(entry.name), params: paramsTemplate(entry.input_schema) }, null, 2));
    setBodyError(null);
  };
  /** A document typed or pasted into the body (a whole request, say) goes to its editor, so it is never in both. */
  const editBody = (text) => {
    const fields = docField && parseObject(text);
    if (fields && typeof fields[docField] === 'string') {
      setGraphqlDocument(fields[docField]);
      setDocumentRevision((n) => n + 1);
      setBody(bodyText(fields, docField));
      setMoved(`Moved "${docField}" to the GraphQL document above.`);
      return;
    }
    setBody(text);
  };

  const form = { body, docField, graphqlDocument, operation, idempotencyKey, runAsync };
  const described = requestOf(form);
  const command = described.error
    ? null
    : curlCommand({ path: executePath(integrationId), tenant, headers: described.headers, body: described.fields });
  const showInvalid = () => setBodyError(described.error);
  const run = async (event) => {
    event.preventDefault();
    if (described.error) return showInvalid();
    setBodyError(null);
    await execute(described);
  };

  return html`<section>
    ${header}
    <div class="columns columns--try">
      <form class="card form" onSubmit=${run} aria-labelledby="request-heading">
        <h2 id="request-heading">Request</h2>
        <div class="form-row">
          <${Field} label="Integration">
            ${(a) => html`<select ...${a} value=${integrationId} onChange=${(e) => choose(e.currentTarget.value, operation)}>
              ${integrations.map((i) => html`<option value=${i.id}>${integrationLabel(i)}</option>`)}
            </select>`}
          <//>
          <${Field} label="Operation">
            ${(a) => html`<select ...${a} value=${operation} onChange=${(e) => choose(integrationId, e.currentTarget.value)}>
              ${operations.map((op) => html`<option value=${op}>${op}</option>`)}
            </select>`}
          <//>
        </div>
        ${wsdlMode && html`<${CataloguePicker} key=${integrationId} catalogue=${catalogue} value=${entryName} onPick=${pick} />`}
        ${
          docField &&
          html`<${GraphqlField} key=${integrationId} label="GraphQL document" value=${graphqlDocument} revision=${documentRevision}
            onChange=${setGraphqlDocument}
            schema=${schema} />`
        }
        <${Field} label="Body (JSON)" hint=${
          `Sent with "operation": "${operation}" to POST /api/v1/integrations/${integrationId}/execute.` +
          (docField ? ` The document above is sent as its "${docField}"; variables and the rest go here.` : '')
        }
          error=${bodyError}>
          ${(a) => html`<textarea ...${a} class="code-input" rows=${docField ? 6 : 12} spellcheck=${false} value=${body}
            onInput=${(e) => editBody(e.currentTarget.value)}></textarea>`}
        <//>
        ${docField && html`<p class="field__hint" role="status">${moved}</p>`}
        <${Field} label="Idempotency-Key (optional)" hint="The same key and body replays the first answer for 24 hours.">
          ${(a) => html`<input ...${a} maxlength="255" spellcheck=${false} value=${idempotencyKey}
            onInput=${(e) => setIdempotencyKey(e.currentTarget.value)} />`}
        <//>
        <label class="check">
          <input type="checkbox" checked=${runAsync} onChange=${(e) => setRunAsync(e.currentTarget.checked)} />
          <span>Run asynchronously <span class="muted">(<code>Prefer: respond-async</code>: answered 202 at once, run by a worker)</span></span>
        </label>
        ${
          !executable &&
          html`<p class="muted">Your role (${role}) cannot run operations; copy the request as curl to run it with a key.</p>`
        }
        <${RequestActions} command=${command} onInvalid=${showInvalid}>
          <button type="submit" class="button button--primary" disabled=${busy || !integration || !executable}>
            ${busy ? 'Running…' : 'Run'}
          </button>
        <//>
      </form>
      <section aria-labelledby="response-heading" class="response-column">
        <h2 id="response-heading" class="section-title">Response</h2>
        <div aria-live="polite">
          <${ErrorNotice} error=${error} title="The request did not complete" />
          ${result ? html`<${Response} result=${result} tenant=${tenant} />` : html`<p class="muted">Run a request to see its answer here.</p>`}
        </div>
      </section>
    </div>
  </section>`;
}
