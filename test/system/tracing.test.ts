import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { assertError, assertOk } from '../support/assertions.ts';
import { type GraphqlServer, startGraphqlServer } from '../support/graphql-server.ts';
import { type Harness, harness, noSchemaCheck } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/** Traces (issue 11): spans of a request, its execute and its upstream calls, exported over OTLP/HTTP to a local receiver. */

type Auth = { key: string; tenant: string };

/** A span as OTLP/JSON carries it, with its attributes flattened. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  kind: number;
  status: { code?: number };
  attributes: Record<string, unknown>;
}

const SERVER = 2;
const INTERNAL = 1;
const CLIENT = 3;
const STATUS_ERROR = 2;

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}

/** An OTLP/HTTP receiver: every span posted to /v1/traces, and the service names they came from. */
async function startReceiver() {
  const spans: ExportedSpan[] = [];
  const services = new Set<unknown>();
  const contentTypes: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    contentTypes.push(String(req.headers['content-type']));
    if (req.url === '/v1/traces') {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of payload.resourceSpans ?? []) {
        const resource = flatten(resourceSpans.resource?.attributes);
        services.add(resource['service.name']);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) spans.push({ ...span, attributes: flatten(span.attributes) });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    services,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function flatten(attributes: Array<{ key: string; value: OtlpValue }> = []): Record<string, unknown> {
  return Object.fromEntries(
    attributes.map(({ key, value }) => [
      key,
      value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue),
    ]),
  );
}

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
const callerSpanId = '00f067aa0ba902b7';
const traceparentOf = (header: IncomingHttpHeaders) =>
  /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(header.traceparent));

describe('traces with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let graphql: GraphqlServer;
  let failing: RawUpstream;
  let soap: RawUpstream;
  let soapAnswer: [number, string] = [500, ''];
  const soapGets: IncomingHttpHeaders[] = [];
  let h: Harness;
  let acme: Auth;
  const saved = { ...process.env };

  const execute = (id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    h.call(acme, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload, headers });
  const put = (id: string, connector: string, config: Record<string, unknown>) =>
    h.call(acme, { method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector, config } });

  before(async () => {
    receiver = await startReceiver();
    graphql = await startGraphqlServer();
    failing = await httpUpstream((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('down for maintenance');
    });
    const wsdl = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');
    soap = await httpUpstream((req, res) => {
      if (req.method === 'GET') {
        soapGets.push(req.headers);
        res.writeHead(200, { 'content-type': 'text/xml' }).end(wsdl.replaceAll('__BASE_URL__', soap.url));
        return;
      }
      res.writeHead(soapAnswer[0], { 'content-type': 'text/xml' }).end(soapAnswer[1]);
    });
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    h = await harness();
    await h.tenant('acme');
    acme = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    // Schema-aware checking off: the spans below are those of the calls alone, no introspection among them.
    assert.equal((await put('gql', 'graphql-1.0.0', { base_url: graphql.url, ...noSchemaCheck })).statusCode, 201);
    assert.equal((await put('down', 'graphql-1.0.0', { base_url: `${failing.url}/graphql`, ...noSchemaCheck })).statusCode, 201);
    assert.equal((await put('calc', 'soap-1.0.0', { endpoint_url: `${soap.url}/calc.wsdl?wsdl&token=s3cret` })).statusCode, 201);
  });
  after(async () => {
    await h.close().catch(() => {});
    process.env = saved;
    await Promise.all([receiver.close(), graphql.close(), failing.close(), soap.close()]);
  });

  test('request, execute and upstream spans, linked to the caller and the upstream, exported when the app closes', async () => {
    const ok = await execute(
      'gql',
      { operation: 'receive', query: '{ usersList { id } }' },
      { traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    assert.equal(ok.statusCode, 200, ok.body);
    assertError(await execute('down', { operation: 'receive', query: '{ usersList { id } }' }), 502, 'upstream_http_error');
    const envelope = (inner: string) =>
      `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${inner}</s:Body></s:Envelope>`;
    soapAnswer = [200, envelope('<AddResponse xmlns="http://example.com/calculator"><AddResult>5</AddResult></AddResponse>')];
    const add = { operation: 'send', method: 'Add', params: { a: 2, b: 3 } };
    assert.deepEqual(assertOk(await execute('calc', add)), { AddResult: 5 });
    assert.deepEqual(assertOk(await execute('calc', add)), { AddResult: 5 });
    const received = graphql.requests.at(-1)?.headers;
    assert.ok(received);

    await h.app.close();
    assert.ok(receiver.contentTypes.length > 0, 'spans were exported when the app closed');
    assert.ok(
      receiver.contentTypes.every((type) => type.startsWith('application/json')),
      receiver.contentTypes.join(),
    );
    assert.deepEqual([...receiver.services], ['interchange']);
    const spans = receiver.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const childrenOf = (span: ExportedSpan) => spans.filter((s) => s.parentSpanId === span.spanId);

    // The traced GraphQL execute: caller → request → execute → upstream, one trace.
    const request = spans.find((s) => s.kind === SERVER && s.traceId === traceId);
    assert.ok(request, 'the request span continues the incoming trace');
    assert.equal(request.name, 'POST /api/v1/integrations/:id/execute');
    assert.equal(request.parentSpanId, callerSpanId);
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.route'], '/api/v1/integrations/:id/execute');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.attributes['interchange.tenant_id'], 'acme');

    const [executeSpan, ...more] = childrenOf(request);
    assert.equal(more.length, 0);
    assert.equal(executeSpan.name, 'execute receive');
    assert.equal(executeSpan.kind, INTERNAL);
    assert.equal(executeSpan.traceId, traceId);
    assert.deepEqual(
      {
        tenant: executeSpan.attributes['interchange.tenant_id'],
        integration: executeSpan.attributes['interchange.integration_id'],
        operation: executeSpan.attributes['interchange.operation'],
        error: executeSpan.attributes['interchange.error_code'],
      },
      { tenant: 'acme', integration: 'gql', operation: 'receive', error: undefined },
    );
    assert.notEqual(executeSpan.status.code, STATUS_ERROR);

    const [upstream, ...others] = childrenOf(executeSpan);
    assert.equal(others.length, 0);
    assert.equal(upstream.kind, CLIENT);
    assert.equal(upstream.traceId, traceId);
    assert.equal(upstream.attributes['http.request.method'], 'POST');
    assert.equal(upstream.attributes['url.full'], graphql.url);
    assert.equal(upstream.attributes['http.response.status_code'], 200);
    // The upstream got the upstream span's context, in the caller's trace.
    assert.deepEqual(traceparentOf(received)?.slice(1), [traceId, upstream.spanId]);

    // The failing execute: the error code on the execute span, which is failed, and the 500 on its upstream span.
    const failed = spans.find((s) => s.kind === INTERNAL && s.attributes['interchange.integration_id'] === 'down');
    assert.ok(failed);
    assert.equal(failed.attributes['interchange.error_code'], 'upstream_http_error');
    assert.equal(failed.status.code, STATUS_ERROR);
    const failedRequest = byId.get(failed.parentSpanId);
    assert.equal(failedRequest?.kind, SERVER);
    assert.equal(failedRequest?.parentSpanId ?? '', '', 'without a traceparent, the request starts a trace');
    assert.equal(failedRequest?.attributes['http.response.status_code'], 502);
    const [failedUpstream] = childrenOf(failed);
    assert.equal(failedUpstream.attributes['http.response.status_code'], 500);
    assert.equal(failedUpstream.status.code, STATUS_ERROR);

    // SOAP in WSDL mode: a WSDL load span (a miss, then a hit), whose child fetched the WSDL with a traceparent.
    const soapExecutes = spans.filter((s) => s.kind === INTERNAL && s.attributes['interchange.integration_id'] === 'calc');
    assert.equal(soapExecutes.length, 2);
    const loads = soapExecutes.map((execute) => childrenOf(execute).find((s) => s.name === 'wsdl load'));
    assert.deepEqual(
      loads.map((load) => load?.attributes['interchange.wsdl.cache']),
      ['miss', 'hit'],
    );
    assert.equal(loads[0]?.attributes['interchange.wsdl.url'], `${soap.url}/calc.wsdl?wsdl&token`, 'no query values');
    const [wsdlFetch] = childrenOf(loads[0]!);
    assert.equal(wsdlFetch.kind, CLIENT);
    assert.equal(wsdlFetch.attributes['http.request.method'], 'GET');
    assert.equal(wsdlFetch.attributes['url.full'], `${soap.url}/calc.wsdl`);
    assert.equal(soapGets.length, 1);
    assert.deepEqual(traceparentOf(soapGets[0])?.slice(1), [wsdlFetch.traceId, wsdlFetch.spanId]);
    assert.deepEqual(
      soapExecutes.map((execute) => childrenOf(execute).filter((s) => s.kind === CLIENT).length),
      [1, 1],
      'each execute posts once, beside the WSDL load',
    );
    assert.ok(soapExecutes.every((execute) => execute.attributes['interchange.connector'] === 'soap-1.0.0'));
  });
});

test('with OTEL_EXPORTER_OTLP_ENDPOINT unset, no OpenTelemetry SDK module is loaded', async () => {
  // A child process that watches every module resolution while it builds the app and runs an execute (which reaches
  // the transport: the upstream refuses the connection).
  const script = `
    import { registerHooks } from 'node:module';
    const resolved = [];
    registerHooks({
      resolve(specifier, context, next) {
        const result = next(specifier, context);
        resolved.push(result.url);
        return result;
      },
    });
    const { harness } = await import(${JSON.stringify(new URL('../support/harness.ts', import.meta.url).href)});
    const h = await harness();
    await h.tenant('acme');
    const auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    const payload = { connector: 'graphql-1.0.0', config: { base_url: 'http://127.0.0.1:1/graphql' } };
    await h.call(auth, { method: 'PUT', url: '/api/v1/integrations/gql', payload });
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/gql/execute',
      payload: { operation: 'receive', query: '{ ping }' },
    });
    await h.close();
    console.log(JSON.stringify({ code: JSON.parse(res.body).error?.code, resolved }));
  `;
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env });
  const { code, resolved } = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as { code: string; resolved: string[] };
  assert.equal(code, 'upstream_unreachable');
  assert.ok(
    resolved.some((url) => url.includes('/node_modules/fastify/')),
    'the hook saw the app load',
  );
  // The API alone is no SDK: prom-client loads it (for exemplars) whatever this setting.
  assert.deepEqual(
    resolved.filter((url) => url.includes('/@opentelemetry/') && !url.includes('/@opentelemetry/api/')),
    [],
  );
});
