import { useEffect, useState } from 'preact/hooks';
import { CataloguePicker } from '../components/catalogue-picker.js';
import { GraphqlField } from '../components/graphql-field.js';
import { Badge, Empty, ErrorNotice, Field, Loading, PageHeader } from '../components/ui.js';
import { request } from '../lib/api.js';
import { isWsdlUrl, paramsTemplate, soapCallOf } from '../lib/catalog.js';
import { documentField, exampleBody, operations } from '../lib/connectors.js';
import { formatDuration } from '../lib/format.js';
import { html } from '../lib/html.js';
import { can } from '../lib/roles.js';
import { Link, tenantPath } from '../lib/router.js';
import { useAction } from '../lib/use-action.js';
import { useCatalogue } from '../lib/use-catalogue.js';
import { useGraphqlSchema } from '../lib/use-graphql-schema.js';
import { loadAllIntegrations } from './integrations.js';

/** `upstream;dur=12.3, interchange;dur=1.2` → [{name, dur}]. */
function parseServerTiming(header) {
  if (!header) return [];
  return header.split(',').map((entry) => {
    const [name, ...params] = entry.trim().split(';');
    const dur = params.map((p) => p.trim()).find((p) => p.startsWith('dur='));
    return { name, dur: dur ? Number(dur.slice(4)) : null };
  });
}

const bodyText = (connector, operation) => JSON.stringify(exampleBody(connector, operation), null, 2);

/** The JSON object in `text`, or null when it is not one (the person may be halfway through an edit). */
function parseObject(text) {
  try {
    const value = JSON.parse(text || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** `text` with its `field` set to `value`, when it is a JSON object; else unchanged. */
function withField(text, field, value) {
  const fields = parseObject(text);
  return fields ? JSON.stringify({ ...fields, [field]: value }, null, 2) : text;
}

function Response({ result, tenant }) {
  const timings = parseServerTiming(result.headers.get('server-timing'));
  const replayed = result.headers.get('idempotent-replayed') === 'true';
  const queued = result.status === 202 ? result.body?.data?.execution_id : null;
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
    ${!result.ok && result.body?.error && html`<p class="response__error"><code>${result.body.error.code}</code> ${result.body.error.message}</p>`}
    <pre class="code code--tall" tabindex="0" aria-label="Response body">${result.body ? JSON.stringify(result.body, null, 2) : result.text}</pre>
  </div>`;
}

export function TryItOut({ tenant, role }) {
  const [integrations, setIntegrations] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [integrationId, setIntegrationId] = useState('');
  const [operation, setOperation] = useState('test');
  const [body, setBody] = useState('{}');
  // The GraphQL document of receive and send, edited in its own editor and kept in the body's field.
  const [graphqlDocument, setGraphqlDocument] = useState('');
  // Counts the document's edits made outside its editor (the body, an example), which the editor then takes.
  const [documentRevision, setDocumentRevision] = useState(0);
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
  } = useAction(async (fields) => {
    const headers = idempotencyKey.trim() ? { 'idempotency-key': idempotencyKey.trim() } : {};
    if (runAsync) headers.prefer = 'respond-async';
    setResult(
      await request(`/integrations/${encodeURIComponent(integrationId)}/execute`, {
        method: 'POST',
        tenant,
        headers,
        body: { ...fields, operation },
      }),
    );
  });

  useEffect(() => {
    loadAllIntegrations(tenant).then((list) => {
      setIntegrations(list);
      if (list[0]) {
        setIntegrationId(list[0].id);
        setBody(bodyText(list[0].connector, 'test'));
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
      <${Link} href=${tenantPath(tenant, 'new-integration')}>Create an integration<//> first.
    <//></section>`;
  }
  const choose = (id, op) => {
    const next = integrations.find((i) => i.id === id);
    const example = exampleBody(next?.connector, op);
    setIntegrationId(id);
    setOperation(op);
    setBody(JSON.stringify(example, null, 2));
    setGraphqlDocument(example[documentField(next?.connector, op)] ?? '');
    setDocumentRevision((n) => n + 1);
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
  const editBody = (text) => {
    setBody(text);
    const value = docField && parseObject(text)?.[docField];
    if (typeof value === 'string' && value !== graphqlDocument) {
      setGraphqlDocument(value);
      setDocumentRevision((n) => n + 1);
    }
  };
  const editDocument = (text) => {
    setGraphqlDocument(text);
    setBody((current) => withField(current, docField, text));
  };

  const run = async (event) => {
    event.preventDefault();
    let fields;
    try {
      fields = JSON.parse(body || '{}');
      if (!fields || typeof fields !== 'object' || Array.isArray(fields)) throw new Error('The body must be a JSON object.');
    } catch (problem) {
      setBodyError(problem.message);
      return;
    }
    setBodyError(null);
    // What the editor holds is what is sent.
    await execute(docField ? { ...fields, [docField]: graphqlDocument } : fields);
  };

  return html`<section>
    ${header}
    <div class="columns columns--try">
      <form class="card form" onSubmit=${run} aria-labelledby="request-heading">
        <h2 id="request-heading">Request</h2>
        <div class="form-row">
          <${Field} label="Integration">
            ${(a) => html`<select ...${a} value=${integrationId} onChange=${(e) => choose(e.currentTarget.value, operation)}>
              ${integrations.map((i) => html`<option value=${i.id}>${i.name || i.id}</option>`)}
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
            onChange=${editDocument}
            schema=${schema} />`
        }
        <${Field} label="Body (JSON)" hint=${
          `Sent with "operation": "${operation}" to POST /api/v1/integrations/${integrationId}/execute.` +
          (docField ? ` Its "${docField}" is the document above; variables go here.` : '')
        }
          error=${bodyError}>
          ${(a) => html`<textarea ...${a} class="code-input" rows=${docField ? 6 : 12} spellcheck=${false} value=${body}
            onInput=${(e) => editBody(e.currentTarget.value)}></textarea>`}
        <//>
        <${Field} label="Idempotency-Key (optional)" hint="The same key and body replays the first answer for 24 hours.">
          ${(a) => html`<input ...${a} maxlength="255" spellcheck=${false} value=${idempotencyKey}
            onInput=${(e) => setIdempotencyKey(e.currentTarget.value)} />`}
        <//>
        <label class="check">
          <input type="checkbox" checked=${runAsync} onChange=${(e) => setRunAsync(e.currentTarget.checked)} />
          <span>Run asynchronously <span class="muted">(<code>Prefer: respond-async</code>: answered 202 at once, run by a worker)</span></span>
        </label>
        <div class="form__actions">
          <button type="submit" class="button button--primary" disabled=${busy || !integration || !can(role, 'integrations.execute')}>
            ${busy ? 'Running…' : 'Run'}
          </button>
        </div>
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
