import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { body, type Harness, harness, noSchemaCheck } from '../support/harness.ts';
import { asPerson, person, tokensOf } from '../support/people.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';

/**
 * docs/security.md#redaction, issue 17 finding 4: an upstream that echoes the credential it was sent transformed (the Authorization
 * header in base64, the token lower-cased, spread out, URL-encoded…) must not show it to a caller, nor to whoever reads
 * the executions log: not in `body_excerpt`, GraphQL `errors`, a SOAP fault's string or detail, `error_message` or
 * `error_details`. The upstreams here echo the header they received, as it came, so nothing is staged.
 */

type Auth = { key: string; tenant: string };
type Json = Record<string, unknown>;

const token = 'Zm9v+YmFy/tok-7Qx9Lw';
const password = 's0ap&Pass<w0rd!';
const soapValue = `Basic ${Buffer.from(`svc-user:${password}`).toString('base64')}`;
const xmlEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

const b64 = (text: string, alphabet: BufferEncoding = 'base64') => Buffer.from(text, 'utf8').toString(alphabet);
/** The characters of base64(prefix + secret + …) fixed by the secret's bytes: what an echo must not keep. */
const fixedBy = (prefix: string, secret: string, alphabet: BufferEncoding = 'base64') =>
  b64(`${prefix}${secret}`, alphabet).slice(
    Math.ceil((Buffer.byteLength(prefix) * 8) / 6),
    Math.floor(((Buffer.byteLength(prefix) + Buffer.byteLength(secret)) * 8) / 6),
  );

/** An echo of the header an upstream received: its text, and the parts of it that show the secret. */
interface Echo {
  text: (header: string) => string;
  shows: string[];
}

const graphqlEchoes: Record<string, Echo> = {
  base64: { text: (h) => b64(h), shows: [fixedBy('Bearer ', token)] },
  base64url: { text: (h) => b64(`auth=${h}`, 'base64url'), shows: [fixedBy('auth=Bearer ', token, 'base64url')] },
  lower: { text: (h) => h.toLowerCase(), shows: [token.toLowerCase()] },
  upper: { text: (h) => h.toUpperCase(), shows: [token.toUpperCase()] },
  spaced: { text: (h) => [...h.slice(7)].join(' '), shows: [[...token].join(' ')] },
  url: { text: (h) => encodeURIComponent(h), shows: [encodeURIComponent(token)] },
  form: { text: (h) => new URLSearchParams({ h }).toString(), shows: [new URLSearchParams({ token }).toString().slice(6)] },
  json: { text: (h) => JSON.stringify(h).replaceAll('/', '\\/'), shows: [token.replaceAll('/', '\\/')] },
};

/** The SOAP upstream writes each echo XML-escaped (a fault's text is unescaped when read, an excerpt is not). */
const soapEchoes: Record<string, Echo> = {
  decoded: { text: (h) => Buffer.from(h.slice(6), 'base64').toString('utf8'), shows: [password, xmlEscape(password)] },
  lower: { text: (h) => h.toLowerCase(), shows: [soapValue.slice(6).toLowerCase()] },
  upper: { text: () => password.toUpperCase(), shows: [password.toUpperCase(), xmlEscape(password.toUpperCase())] },
  spaced: { text: (h) => [...h.slice(6)].join(' '), shows: [[...soapValue.slice(6)].join(' ')] },
  base64: { text: (h) => b64(`Authorization: ${h}`), shows: [fixedBy('Authorization: ', soapValue)] },
  url: { text: (h) => encodeURIComponent(h), shows: [encodeURIComponent(soapValue.slice(6))] },
};

describe('transformed echoes of a credential are redacted from answers and from the executions log', () => {
  let h: Harness;
  let admin: Auth;
  let reader: Auth;
  let viewerToken: string;
  let gql: RawUpstream;
  let soap: RawUpstream;

  before(async () => {
    h = await harness();
    await h.tenant('acme');
    admin = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    reader = { key: (await h.key('acme', ['executions.read'])).key, tenant: 'acme' };
    await person(h, 'viewer@acme.test', { acme: 'viewer' });
    viewerToken = (await tokensOf(h, 'viewer@acme.test')).access;

    // The query names the place (`excerpt`, `errors`, `partial`) and the echo: `{ errors_base64 }`.
    gql = await httpUpstream((req, res, raw) => {
      const [place, name] = /\{ (\w+?)_(\w+) \}/.exec(String(JSON.parse(raw).query))?.slice(1) ?? [];
      const echo = graphqlEchoes[name].text(String(req.headers.authorization));
      const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (place === 'excerpt') res.writeHead(401, { 'content-type': 'text/plain' }).end(`token refused: ${echo}`);
      else if (place === 'errors') json({ data: null, errors: [{ message: `refused ${echo}`, extensions: { seen: echo } }] });
      else json({ data: { ok: echo }, errors: [{ message: `weak ${echo}` }] });
    });
    // A raw-mode SOAP endpoint: the method names the place (`Fault`, `Down`) and the echo's name is the namespace's end.
    soap = await httpUpstream((req, res, raw) => {
      const name = /urn:echo:(\w+)/.exec(raw)?.[1] ?? '';
      const echo = soapEchoes[name].text(String(req.headers['x-auth']));
      if (raw.includes('<Down')) {
        res.writeHead(503, { 'content-type': 'text/html' }).end(`<p>maintenance; you sent ${xmlEscape(echo)}</p>`);
        return;
      }
      res
        .writeHead(500, { 'content-type': 'text/xml' })
        .end(
          '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault>' +
            `<faultcode>soap:Client</faultcode><faultstring>bad credential ${xmlEscape(echo)}</faultstring>` +
            `<detail><given>${xmlEscape(echo)}</given></detail></soap:Fault></soap:Body></soap:Envelope>`,
        );
    });
    for (const [id, connector, config] of [
      ['gql', 'graphql-1.0.0', { base_url: gql.url, token, ...noSchemaCheck }],
      [
        'soap',
        'soap-1.0.0',
        { endpoint_url: `${soap.url}/svc`, namespace: 'urn:echo', auth_header: 'X-Auth', auth_value: soapValue },
      ],
    ] as const) {
      const res = await h.call(admin, { method: 'PUT', url: `/api/v1/integrations/${id}`, payload: { connector, config } });
      assert.equal(res.statusCode, 201, res.body);
    }
  });
  after(async () => {
    await gql?.close();
    await soap?.close();
    await h?.close();
  });

  const execute = (id: string, payload: Json) =>
    h.call(admin, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });

  /** The execution of an answer as a key that may only read executions, and as a viewer, sees it. */
  async function records(res: LightMyRequestResponse): Promise<string[]> {
    const list = await h.call(reader, { method: 'GET', url: '/api/v1/executions?limit=100' });
    assert.equal(list.statusCode, 200, list.body);
    const row = body(list).data.find((e: Json) => e.request_id === res.headers['x-request-id']);
    assert.ok(row, 'the execution is recorded');
    const url = `/api/v1/executions/${row.id}`;
    const asKey = await h.call(reader, { method: 'GET', url });
    const asViewer = await asPerson(h, viewerToken, 'acme', { method: 'GET', url });
    for (const seen of [asKey, asViewer]) assert.equal(seen.statusCode, 200, seen.body);
    return [list.body, asKey.body, asViewer.body];
  }

  /** Neither the answer nor the records show the echo (as it is, or as JSON writes it), and [REDACTED] stands for it. */
  async function assertHidden(res: LightMyRequestResponse, echo: Echo, label: string): Promise<void> {
    const texts = [res.body, ...(await records(res))];
    for (const text of texts) {
      for (const shown of new Set(echo.shows.flatMap((part) => [part, JSON.stringify(part).slice(1, -1)]))) {
        assert.ok(!text.includes(shown), `${label}: ${JSON.stringify(shown)} in ${text.slice(0, 600)}`);
      }
    }
    assert.ok(res.body.includes('[REDACTED]'), `${label}: ${res.body}`);
    // A success's record has no error to show; a failure's keeps the message and details as the caller got them.
    if (res.statusCode >= 300) assert.ok(texts[2].includes('[REDACTED]'), `${label}: the record has no [REDACTED]: ${texts[2]}`);
  }

  for (const [name, echo] of Object.entries(graphqlEchoes)) {
    test(`GraphQL, the token echoed ${name}: body_excerpt, errors (502 and partial), the log`, async () => {
      const excerpt = await execute('gql', { operation: 'receive', query: `{ excerpt_${name} }` });
      assert.equal(body(excerpt).error?.code, 'upstream_http_error', excerpt.body);
      await assertHidden(excerpt, echo, 'body_excerpt');

      const failed = await execute('gql', { operation: 'receive', query: `{ errors_${name} }` });
      assert.equal(body(failed).error?.code, 'graphql_errors', failed.body);
      await assertHidden(failed, echo, 'graphql_errors');

      const partial = await execute('gql', { operation: 'send', mutation: `mutation { partial_${name} }` });
      assert.equal(partial.statusCode, 200, partial.body);
      await assertHidden(partial, echo, 'partial errors');
    });
  }

  for (const [name, echo] of Object.entries(soapEchoes)) {
    test(`SOAP, the Basic auth_value echoed ${name}: fault string and detail, body_excerpt, the log`, async () => {
      const fault = await execute('soap', { operation: 'send', method: 'Fault', namespace: `urn:echo:${name}` });
      assert.equal(body(fault).error?.code, 'soap_fault', fault.body);
      await assertHidden(fault, echo, 'soap_fault');

      const down = await execute('soap', { operation: 'send', method: 'Down', namespace: `urn:echo:${name}` });
      assert.equal(body(down).error?.code, 'upstream_http_error', down.body);
      await assertHidden(down, echo, 'body_excerpt');
    });
  }
});
