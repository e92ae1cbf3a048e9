import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { assertError, assertOk } from '../support/assertions.ts';
import { body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { type Issued, TestPki } from '../support/test-pki.ts';

/**
 * `config.tls` end to end through the execute endpoint (issue 19; docs/security.md#tls): an integration trusts its
 * private CA and presents its client certificate to a node:https server that demands one; answers show certificate
 * facts, never PEM; PUT/PATCH refuse what cannot work, the stored key included; `test` names a certificate about to
 * expire. The certificates are made by the openssl command (TestPki).
 */

const password = 'key-Password-71c0d9e2';

describe('config.tls through execute: a private CA and mutual TLS', () => {
  const pki = new TestPki();
  let h: Harness;
  let auth: { key: string; tenant: string };
  let ca: Issued;
  let client: Issued;
  let clientSoon: Issued;
  let encryptedKey: string;
  let url = '';
  let soapUrl = '';
  const servers: { close(): void }[] = [];

  const { put, patch, execute } = integrationCalls(() => ({ h, auth }));
  const paths = (res: Parameters<typeof body>[0]) =>
    (body(res).error.details.issues as { path: string }[]).map((issue) => issue.path);

  /** An https server on 127.0.0.1 demanding a client certificate of the client CA; it answers with the client's CN. */
  async function mtlsServer(server: Issued, clientCa: Issued, answer: (cn: string) => [string, string]): Promise<string> {
    const https = createServer(
      { cert: server.cert, key: server.key, ca: clientCa.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const cn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
        req.resume();
        req.on('end', () => {
          const [type, text] = answer(cn);
          res.writeHead(200, { 'content-type': type }).end(text);
        });
      },
    );
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    servers.push(https);
    return `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  }

  before(async () => {
    ca = pki.ca('ca', 'Test CA');
    const clientCa = pki.ca('client-ca', 'Client CA');
    const server = pki.sign('ca', 'server', { cn: 'localhost', san: 'DNS:localhost,IP:127.0.0.1', usage: 'serverAuth' });
    client = pki.sign('client-ca', 'client', { cn: 'client-one', usage: 'clientAuth' });
    clientSoon = pki.sign('client-ca', 'client-soon', { cn: 'client-soon', usage: 'clientAuth', days: 10 });
    encryptedKey = pki.encryptedKey('client', password);
    url = await mtlsServer(server, clientCa, (cn) => ['application/json', JSON.stringify({ data: { items: [{ id: cn }] } })]);
    soapUrl = await mtlsServer(server, clientCa, (cn) => [
      'text/xml',
      `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><AddResponse><AddResult>${cn}</AddResult></AddResponse></s:Body></s:Envelope>`,
    ]);
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
  });
  after(async () => {
    for (const server of servers) server.close();
    await h.close();
    pki.remove();
  });

  test('without config.tls the private CA is not trusted: 502 tls, with the code and the field that fixes it', async () => {
    await put('plain', 'graphql-1.0.0', { base_url: url });
    const error = assertError(
      await execute('plain', { operation: 'receive', query: '{ items { id } }' }),
      502,
      'upstream_unreachable',
    );
    assert.equal(error.details?.cause, 'tls');
    assert.equal(error.details?.tls_error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.match(error.message, /config\.tls\.ca/);
  });

  test('with its CA and client certificate the call goes through; the server saw the client certificate', async () => {
    const res = await put('mtls', 'graphql-1.0.0', {
      base_url: url,
      tls: { ca: ca.cert, client_certificate: client.cert, client_key: client.key },
    });
    assert.equal(res.statusCode, 201, res.body);
    const data = assertOk(await execute('mtls', { operation: 'receive', query: '{ items { id } }' }));
    assert.deepEqual(data.data, [{ id: 'client-one' }]);

    // The CA alone: the server refuses the handshake without a client certificate.
    await put('ca-only', 'graphql-1.0.0', { base_url: url, tls: { ca: ca.cert } });
    const refused = assertError(
      await execute('ca-only', { operation: 'receive', query: '{ items { id } }' }),
      502,
      'upstream_unreachable',
    );
    assert.ok(['tls', 'reset'].includes(String(refused.details?.cause)), JSON.stringify(refused.details));
  });

  test('an encrypted key with its password; SOAP raw mode over the same mutual TLS', async () => {
    const tls = { ca: ca.cert, client_certificate: client.cert, client_key: encryptedKey, client_key_password: password };
    assert.equal((await put('soap-mtls', 'soap-1.0.0', { endpoint_url: soapUrl, namespace: 'urn:x', tls })).statusCode, 201);
    const data = assertOk(await execute('soap-mtls', { operation: 'send', method: 'Add', params: { a: 1 } }));
    assert.deepEqual(data, { AddResult: 'client-one' });
  });

  test('answers show certificate facts, never PEM; the key is stored encrypted', async () => {
    const shown = body(await h.call(auth, { method: 'GET', url: '/api/v1/integrations/mtls' })).data.config.tls;
    assert.equal(shown.client_key_set, true);
    assert.equal(shown.client_key_password_set, false);
    assert.equal(shown.min_version, 'TLSv1.2');
    assert.match(shown.client_certificate.subject, /client-one/);
    assert.match(shown.client_certificate.fingerprint_sha256, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(shown.ca.length, 1);
    assert.match(shown.ca[0].subject, /Test CA/);
    assert.ok(!JSON.stringify(shown).includes('BEGIN'));
    const row = await h.storage.db.selectFrom('integrations').selectAll().where('id', '=', 'mtls').executeTakeFirstOrThrow();
    assert.ok(!row.secrets.includes('PRIVATE KEY') && !row.config.includes('PRIVATE KEY'));
  });

  test('PUT and PATCH refuse what cannot work, checked with the stored key', async () => {
    const other = pki.sign('client-ca', 'other', { cn: 'other', usage: 'clientAuth' });
    const expired = pki.sign('client-ca', 'expired', {
      cn: 'expired',
      usage: 'clientAuth',
      window: { start: '20200101000000Z', end: '20210101000000Z' },
    });
    const mismatched = await put('bad', 'graphql-1.0.0', {
      base_url: url,
      tls: { client_certificate: client.cert, client_key: other.key },
    });
    assertError(mismatched, 400, 'validation_failed');
    assert.ok(paths(mismatched).includes('config.tls.client_key'), JSON.stringify(paths(mismatched)));
    const old = await put('bad', 'graphql-1.0.0', {
      base_url: url,
      tls: { client_certificate: expired.cert, client_key: expired.key },
    });
    assert.ok(paths(old).includes('config.tls.client_certificate'));
    assert.ok(paths(await put('bad', 'graphql-1.0.0', { base_url: url, tls: { ca: 'not a PEM' } })).includes('config.tls.ca'));
    const noPassword = await put('bad', 'graphql-1.0.0', {
      base_url: url,
      tls: { client_certificate: client.cert, client_key: encryptedKey },
    });
    assert.ok(paths(noPassword).includes('config.tls.client_key_password'));

    // A PATCH of the certificate alone is checked against the key kept from before.
    const kept = await patch('mtls', { tls: { client_certificate: other.cert } });
    assertError(kept, 400, 'validation_failed');
    assert.ok(paths(kept).includes('config.tls.client_key'));
    const renewed = await patch('mtls', { tls: { client_certificate: client.cert, server_name: 'localhost' } });
    assert.equal(renewed.statusCode, 200, renewed.body);
    assert.equal(body(renewed).data.config.tls.server_name, 'localhost');
    assertOk(await execute('mtls', { operation: 'receive', query: '{ items { id } }' }));
    // null removes one field and keeps the rest, the stored key included.
    const unnamed = body(await patch('mtls', { tls: { server_name: null } })).data.config.tls;
    assert.equal(unnamed.server_name, undefined);
    assert.equal(unnamed.client_key_set, true);
  });

  test('test names a client certificate that expires within 30 days', async () => {
    await put('soon', 'graphql-1.0.0', {
      base_url: url,
      tls: { ca: ca.cert, client_certificate: clientSoon.cert, client_key: clientSoon.key },
    });
    const res = await execute('soon', { operation: 'test' });
    // The server answers items, not a schema: the test fails or succeeds by the upstream's answer, but warns either way.
    const warnings = res.statusCode === 200 ? body(res).data.details.warnings : undefined;
    if (res.statusCode === 200) {
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /config\.tls\.client_certificate certificate .*client-soon.* expires on .* in (9|10) days/);
    } else {
      assert.fail(`test answered ${res.statusCode}: ${res.body}`);
    }
  });
});

describe('a TLS client key goes only to the origins the config names', () => {
  const pki = new TestPki();
  let h: Harness;
  let auth: { key: string; tenant: string };
  const servers: { close(): void }[] = [];
  /** Per server, each request with the CN of the client certificate presented ('' for none). */
  const seen: Record<'a' | 'b', Array<[string, string]>> = { a: [], b: [] };
  const wsdl = readFileSync(new URL('../support/fixtures/soap/imported.wsdl', import.meta.url), 'utf8');
  const types = readFileSync(new URL('../support/fixtures/soap/types.xsd', import.meta.url), 'utf8');
  const greeted =
    '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><GreetResponse xmlns="http://example.com/greeter/types"><GreetResult>Hello, Ann!</GreetResult></GreetResponse></s:Body></s:Envelope>';
  let a = '';
  let b = '';

  /** An https server that asks for a client certificate, takes the call without one, and notes which it got. */
  async function asking(name: 'a' | 'b', server: Issued, clientCa: Issued): Promise<string> {
    const https = createServer(
      { cert: server.cert, key: server.key, ca: clientCa.cert, requestCert: true, rejectUnauthorized: false },
      (req, res) => {
        const cn = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
        seen[name].push([`${req.method} ${req.url}`, cn]);
        req.resume();
        req.on('end', () => {
          const xml = (text: string) => res.writeHead(200, { 'content-type': 'text/xml' }).end(text);
          if (req.url === '/greeter.wsdl')
            xml(wsdl.replace('__BASE_URL__/types.xsd', `${b}/types.xsd`).replaceAll('__BASE_URL__', a));
          else if (req.url === '/types.xsd') xml(types);
          else xml(greeted);
        });
      },
    );
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    servers.push(https);
    return `https://127.0.0.1:${(https.address() as AddressInfo).port}`;
  }

  before(async () => {
    const ca = pki.ca('ca', 'Test CA');
    const clientCa = pki.ca('client-ca', 'Client CA');
    const server = pki.sign('ca', 'server', { cn: 'localhost', san: 'DNS:localhost,IP:127.0.0.1', usage: 'serverAuth' });
    const client = pki.sign('client-ca', 'client', { cn: 'client-one', usage: 'clientAuth' });
    a = await asking('a', server, clientCa);
    b = await asking('b', server, clientCa);
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    const res = await h.call(auth, {
      method: 'PUT',
      url: '/api/v1/integrations/greeter',
      payload: {
        connector: 'soap-1.0.0',
        config: {
          endpoint_url: `${a}/greeter.wsdl`,
          tls: { ca: ca.cert, client_certificate: client.cert, client_key: client.key },
        },
      },
    });
    assert.equal(res.statusCode, 201, res.body);
  });
  after(async () => {
    for (const server of servers) server.close();
    await h.close();
    pki.remove();
  });

  test('a WSDL on A importing its XSD from B: A sees the client certificate, B (asking for one) gets none', async () => {
    const res = await h.call(auth, {
      method: 'POST',
      url: '/api/v1/integrations/greeter/execute',
      payload: { operation: 'send', method: 'Greet', params: { name: 'Ann' } },
    });
    assert.deepEqual(assertOk(res), { GreetResult: 'Hello, Ann!' });
    assert.deepEqual(seen.a, [
      ['GET /greeter.wsdl', 'client-one'],
      ['POST /imported', 'client-one'],
    ]);
    assert.deepEqual(seen.b, [['GET /types.xsd', '']], 'B asked for a certificate and got none');
  });
});
