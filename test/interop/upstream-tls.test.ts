import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getCACertificates, type PeerCertificate, setDefaultCACertificates, type TLSSocket } from 'node:tls';
import { type Dispatcher, request } from 'undici';
import { ApiError } from '../../src/core/errors.ts';
import { createEgressDispatcher } from '../../src/egress/dispatcher.ts';
import { IntegrationDispatchers } from '../../src/egress/integration-dispatchers.ts';
import { createEgressPolicy } from '../../src/egress/policy.ts';
import { connectOptions, describeTls, type TlsConfig, tlsProblems, tlsWarnings } from '../../src/egress/tls.ts';
import { sendUpstream } from '../../src/transport/upstream.ts';
import { startOpensslServer } from '../support/openssl-server.ts';
import { type Issued, TestPki } from '../support/test-pki.ts';

const PASSWORD = 'correct horse battery staple';
const policy = createEgressPolicy({ allowPrivate: true });
const pki = new TestPki();
const EXPIRED = { start: '20200101000000Z', end: '20210101000000Z' };
const SAN = 'DNS:localhost,IP:127.0.0.1';

let ca: Issued;
let otherCa: Issued;
let clientCa: Issued;
let client: Issued;
let clientFromOtherCa: Issued;
let clientExpired: Issued;
let clientSoon: Issued;
let clientKeyEncrypted: string;
let server: Issued;

const servers: { close(): void }[] = [];

/** An https server on 127.0.0.1 answering with what it saw of the TLS session: the client's CN and the SNI name. */
async function httpsServer(options: ServerOptions): Promise<string> {
  const httpsServer = createServer(options, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerCertificate() as PeerCertificate | Record<string, never>;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ client: 'subject' in peer ? peer.subject.CN : null, servername: socket.servername || null }));
  });
  httpsServer.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => httpsServer.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => httpsServer.close() && httpsServer.closeAllConnections() });
  return `https://127.0.0.1:${(httpsServer.address() as AddressInfo).port}`;
}

const open: Dispatcher[] = [];
function dispatcherFor(tls?: TlsConfig): Dispatcher {
  const dispatcher = createEgressDispatcher(policy, tls ? { tls: connectOptions(tls) } : {});
  open.push(dispatcher);
  return dispatcher;
}

async function get(dispatcher: Dispatcher, url: string): Promise<{ client: string | null; servername: string | null }> {
  const response = await sendUpstream(dispatcher, { url, method: 'GET', headers: {}, timeoutMs: 30_000, maxBodyBytes: 65_536 });
  assert.equal(response.status, 200);
  return JSON.parse(response.body.toString());
}

async function tlsFailure(dispatcher: Dispatcher, url: string): Promise<ApiError> {
  const err = await get(dispatcher, url).then(
    () => assert.fail('expected a TLS failure, the call succeeded'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${err}`);
  assert.equal(err.code, 'upstream_unreachable', err.message);
  assert.equal(err.status, 502);
  assert.equal(err.details?.cause, 'tls', err.message);
  assert.ok(!err.message.includes(PASSWORD) && !JSON.stringify(err.details).includes('PRIVATE KEY'));
  return err;
}

/** What the `openssl` command says of a certificate: the counterpart of describeTls's facts. */
function opensslFacts(pem: string): { fingerprint: string; notAfter: string } {
  const file = join(pki.dir, 'inspect.pem');
  writeFileSync(file, pem);
  const out = execFileSync('openssl', ['x509', '-in', file, '-noout', '-fingerprint', '-sha256', '-enddate'], {
    encoding: 'utf8',
  });
  const fingerprint = /Fingerprint=([0-9A-F:]+)/.exec(out)?.[1] ?? '';
  const notAfter = new Date(/notAfter=(.+)/.exec(out)?.[1] ?? '').toISOString();
  return { fingerprint, notAfter };
}

let plainUrl: string;
let mtlsUrl: string;
let expiredUrl: string;
let wrongNameUrl: string;
let tls12Url: string;

before(async () => {
  ca = pki.ca('ca', 'Test CA');
  otherCa = pki.ca('other-ca', 'Other CA');
  clientCa = pki.ca('client-ca', 'Client CA');
  server = pki.sign('ca', 'server', { cn: 'localhost', san: SAN, usage: 'serverAuth' });
  const expiredServer = pki.sign('ca', 'expired-server', { cn: 'localhost', san: SAN, usage: 'serverAuth', window: EXPIRED });
  const wrongName = pki.sign('ca', 'wrong-name', { cn: 'wrong.example', san: 'DNS:wrong.example', usage: 'serverAuth' });
  client = pki.sign('client-ca', 'client', { cn: 'client-one', usage: 'clientAuth' });
  clientFromOtherCa = pki.sign('other-ca', 'client-other', { cn: 'client-other', usage: 'clientAuth' });
  clientExpired = pki.sign('client-ca', 'client-expired', { cn: 'client-expired', usage: 'clientAuth', window: EXPIRED });
  clientSoon = pki.sign('client-ca', 'client-soon', { cn: 'client-soon', usage: 'clientAuth', days: 10 });
  clientKeyEncrypted = pki.encryptedKey('client', PASSWORD);

  plainUrl = await httpsServer({ cert: server.cert, key: server.key });
  mtlsUrl = await httpsServer({
    cert: server.cert,
    key: server.key,
    ca: clientCa.cert,
    requestCert: true,
    rejectUnauthorized: true,
  });
  expiredUrl = await httpsServer({ cert: expiredServer.cert, key: expiredServer.key });
  wrongNameUrl = await httpsServer({ cert: wrongName.cert, key: wrongName.key });
  tls12Url = await httpsServer({ cert: server.cert, key: server.key, maxVersion: 'TLSv1.2' });
});

after(async () => {
  await Promise.all(open.map((dispatcher) => dispatcher.close()));
  for (const s of servers) s.close();
  pki.remove();
});

describe('config.tls: trust (docs/security.md#tls)', () => {
  test('a private CA in config.tls.ca is trusted, for the IP and the DNS name of the certificate', async () => {
    const dispatcher = dispatcherFor({ ca: ca.cert });
    assert.deepEqual(await get(dispatcher, plainUrl), { client: null, servername: null });
    assert.deepEqual(await get(dispatcher, plainUrl.replace('127.0.0.1', 'localhost')), {
      client: null,
      servername: 'localhost',
    });
  });

  test('without config.tls the private CA is unknown: UNABLE_TO_VERIFY_LEAF_SIGNATURE, and the message names config.tls.ca', async () => {
    const err = await tlsFailure(dispatcherFor(), plainUrl);
    assert.equal(err.details?.tls_error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    assert.match(err.message, /127\.0\.0\.1.*UNABLE_TO_VERIFY_LEAF_SIGNATURE.*set config\.tls\.ca/);
  });

  test('with config.tls.ca set, the default roots are not trusted: only the bundle is', async () => {
    const defaults = getCACertificates('default');
    // The test CA joins this process's default roots (as a system CA would): the shared dispatcher now trusts it…
    setDefaultCACertificates([...defaults, ca.cert]);
    try {
      assert.deepEqual(await get(dispatcherFor(), plainUrl), { client: null, servername: null });
      // …an integration whose bundle holds another CA does not, and neither does a bundle of two other CAs.
      const err = await tlsFailure(dispatcherFor({ ca: otherCa.cert }), plainUrl);
      assert.equal(err.details?.tls_error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      await tlsFailure(dispatcherFor({ ca: otherCa.cert + clientCa.cert }), plainUrl);
      // A bundle that holds the issuer among others is trusted.
      assert.deepEqual(await get(dispatcherFor({ ca: otherCa.cert + ca.cert }), plainUrl), { client: null, servername: null });
    } finally {
      setDefaultCACertificates(defaults);
    }
  });

  test("an expired upstream certificate is CERT_HAS_EXPIRED; the message says the upstream's certificate needs renewing", async () => {
    const err = await tlsFailure(dispatcherFor({ ca: ca.cert }), expiredUrl);
    assert.equal(err.details?.tls_error, 'CERT_HAS_EXPIRED');
    assert.match(err.message, /the upstream must renew its certificate/);
  });

  test('a certificate for another name is ERR_TLS_CERT_ALTNAME_INVALID naming config.tls.server_name; with it, SNI and verification use it', async () => {
    const err = await tlsFailure(dispatcherFor({ ca: ca.cert }), wrongNameUrl);
    assert.equal(err.details?.tls_error, 'ERR_TLS_CERT_ALTNAME_INVALID');
    assert.match(err.message, /config\.tls\.server_name/);
    const named = dispatcherFor({ ca: ca.cert, server_name: 'wrong.example' });
    assert.deepEqual(await get(named, wrongNameUrl), { client: null, servername: 'wrong.example' });
    // The configured name is verified, not merely sent: the right certificate for 127.0.0.1 does not hold it.
    const mismatch = await tlsFailure(named, plainUrl);
    assert.equal(mismatch.details?.tls_error, 'ERR_TLS_CERT_ALTNAME_INVALID');
  });

  test('min_version TLSv1.3 against a TLSv1.2-only upstream fails with a protocol version alert naming config.tls.min_version', async () => {
    assert.deepEqual(await get(dispatcherFor({ ca: ca.cert }), tls12Url), { client: null, servername: null });
    const err = await tlsFailure(dispatcherFor({ ca: ca.cert, min_version: 'TLSv1.3' }), tls12Url);
    assert.equal(err.details?.tls_error, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    assert.match(err.message, /config\.tls\.min_version/);
    assert.deepEqual(await get(dispatcherFor({ ca: ca.cert, min_version: 'TLSv1.3' }), plainUrl), {
      client: null,
      servername: null,
    });
  });
});

describe('config.tls: mutual TLS', () => {
  test('the client certificate and key are presented', async () => {
    const dispatcher = dispatcherFor({ ca: ca.cert, client_certificate: client.cert, client_key: client.key });
    assert.deepEqual(await get(dispatcher, mtlsUrl), { client: 'client-one', servername: null });
  });

  test('an encrypted key works with its password', async () => {
    const tls = { ca: ca.cert, client_certificate: client.cert, client_key: clientKeyEncrypted, client_key_password: PASSWORD };
    assert.deepEqual(tlsProblems(tls, { now: new Date() }), []);
    assert.deepEqual(await get(dispatcherFor(tls), mtlsUrl), { client: 'client-one', servername: null });
  });

  test('without a client certificate the server refuses: a TLS failure naming config.tls.client_certificate', async () => {
    const err = await tlsFailure(dispatcherFor({ ca: ca.cert }), mtlsUrl);
    assert.match(String(err.details?.tls_error), /^ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED$/);
    assert.match(err.message, /config\.tls\.client_certificate/);
  });

  test("a client certificate from a CA Node's server does not know: it closes without an alert, so the failure is a reset", async () => {
    // Node's server checks the client's chain after the handshake, in JavaScript, and destroys the socket: no alert
    // reaches the client, which can say no more than that the connection closed before any answer.
    const tls = { ca: ca.cert, client_certificate: clientFromOtherCa.cert, client_key: clientFromOtherCa.key };
    const err = await get(dispatcherFor(tls), mtlsUrl).then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e as ApiError,
    );
    assert.equal(err.code, 'upstream_unreachable');
    assert.deepEqual(err.details, { cause: 'reset' });
  });
});

describe("config.tls: mutual TLS against OpenSSL's s_server, which names its refusal in an alert", () => {
  for (const [version, missing] of [
    ['-tls1_3', 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED'],
    ['-tls1_2', 'ERR_SSL_SSL/TLS_ALERT_HANDSHAKE_FAILURE'],
  ]) {
    test(`${version.slice(1)}: no client certificate is ${missing}, one from an unknown CA is ERR_SSL_TLSV1_ALERT_UNKNOWN_CA; both name config.tls.client_certificate`, async () => {
      const args = [
        '-cert',
        'server.pem',
        '-key',
        'server.key',
        '-CAfile',
        'client-ca.pem',
        '-Verify',
        '1',
        '-verify_return_error',
        version,
      ];
      const server = await startOpensslServer(pki.dir, args);
      try {
        const none = await tlsFailure(dispatcherFor({ ca: ca.cert }), server.url);
        assert.equal(none.details?.tls_error, missing);
        assert.match(none.message, /set config\.tls\.client_certificate and config\.tls\.client_key/);
        const unknown = { ca: ca.cert, client_certificate: clientFromOtherCa.cert, client_key: clientFromOtherCa.key };
        const refused = await tlsFailure(dispatcherFor(unknown), server.url);
        assert.equal(refused.details?.tls_error, 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA');
        assert.match(refused.message, /config\.tls\.client_certificate/);
        const accepted = {
          ca: ca.cert,
          client_certificate: client.cert,
          client_key: clientKeyEncrypted,
          client_key_password: PASSWORD,
        };
        const response = await sendUpstream(dispatcherFor(accepted), {
          url: server.url,
          method: 'GET',
          headers: {},
          timeoutMs: 30_000,
          maxBodyBytes: 1 << 20,
        });
        assert.equal(response.status, 200);
        assert.match(response.body.toString(), /CN=client-one|CN = client-one/);
      } finally {
        await server.stop();
      }
    });
  }
});

describe('config.tls: what answers show, warnings and validation', () => {
  test('describeTls shows facts of every certificate (as openssl reads them) and never a PEM or a secret', () => {
    const tls = {
      ca: `${ca.cert}\n${otherCa.cert}`,
      client_certificate: client.cert,
      client_key: clientKeyEncrypted,
      client_key_password: PASSWORD,
    };
    const view = describeTls(tls);
    const expected = (pem: string, subject: string, issuer: string) => {
      const { fingerprint, notAfter } = opensslFacts(pem);
      return { subject, issuer, not_after: notAfter, fingerprint_sha256: fingerprint };
    };
    assert.deepEqual(view, {
      ca: [
        expected(ca.cert, 'CN=Test CA, O=Interchange tests', 'CN=Test CA, O=Interchange tests'),
        expected(otherCa.cert, 'CN=Other CA, O=Interchange tests', 'CN=Other CA, O=Interchange tests'),
      ],
      client_certificate: expected(client.cert, 'CN=client-one, O=Interchange tests', 'CN=Client CA, O=Interchange tests'),
      server_name: undefined,
      min_version: 'TLSv1.2',
      client_key_set: true,
      client_key_password_set: true,
    });
    const shown = JSON.stringify(view);
    assert.ok(!shown.includes('BEGIN') && !shown.includes(PASSWORD));
  });

  test('a certificate that expires within 30 days is named by tlsWarnings; one that has expired too', () => {
    const now = new Date();
    const soon = tlsWarnings({ client_certificate: clientSoon.cert, ca: ca.cert }, { now, withinDays: 30 });
    assert.equal(soon.length, 1);
    assert.match(
      soon[0],
      /^config\.tls\.client_certificate certificate CN=client-soon, O=Interchange tests expires on \S+, in 1?\d days\.$/,
    );
    assert.deepEqual(tlsWarnings({ client_certificate: client.cert, ca: ca.cert }, { now, withinDays: 30 }), []);
    const later = new Date(now.getTime() + 400 * 86_400_000);
    assert.deepEqual(
      tlsWarnings({ client_certificate: client.cert }, { now: later, withinDays: 30 }).map((w) =>
        w.replace(/ on \d{4}-\S+Z/, ''),
      ),
      ['config.tls.client_certificate certificate CN=client-one, O=Interchange tests expired.'],
    );
    assert.match(
      tlsWarnings({ ca: ca.cert }, { now: new Date(now.getTime() + 3640 * 86_400_000), withinDays: 30 })[0],
      /^config\.tls\.ca certificate CN=Test CA/,
    );
  });

  test('tlsProblems: unparsable PEM, a key that does not match, an expired client certificate, each at its path', () => {
    const now = { now: new Date() };
    const paths = (tls: TlsConfig) => tlsProblems(tls, now).map((p) => p.path);
    assert.deepEqual(
      tlsProblems(
        {
          ca: ca.cert,
          client_certificate: client.cert,
          client_key: client.key,
          server_name: 'api.example.com',
          min_version: 'TLSv1.3',
        },
        now,
      ),
      [],
    );
    assert.deepEqual(paths({ ca: 'not a certificate' }), ['config.tls.ca']);
    // A certificate cut short: its DER's lengths no longer add up, whatever bytes the random key gave it.
    const cut = ca.cert.trim().split('\n');
    assert.deepEqual(paths({ ca: [cut[0], cut[1], cut[2], cut.at(-1)].join('\n') }), ['config.tls.ca']);
    assert.deepEqual(paths({ client_certificate: 'junk', client_key: client.key }), ['config.tls.client_certificate']);
    assert.deepEqual(
      paths({ client_certificate: client.cert, client_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }),
      ['config.tls.client_key'],
    );
    assert.deepEqual(tlsProblems({ client_certificate: client.cert, client_key: server.key }, now), [
      { path: 'config.tls.client_key', message: 'does not match client_certificate' },
    ]);
    const expired = tlsProblems({ client_certificate: clientExpired.cert, client_key: clientExpired.key }, now);
    assert.equal(expired.length, 1);
    assert.equal(expired[0].path, 'config.tls.client_certificate');
    assert.match(expired[0].message, /^expired on 2021-01-01T00:00:00\.000Z/);
    assert.deepEqual(paths({ client_certificate: client.cert }), ['config.tls.client_key']);
    assert.deepEqual(paths({ client_key: client.key }), ['config.tls.client_certificate']);
    assert.deepEqual(paths({ client_certificate: client.cert, client_key: clientKeyEncrypted }), [
      'config.tls.client_key_password',
    ]);
    assert.deepEqual(paths({ client_certificate: client.cert, client_key: clientKeyEncrypted, client_key_password: 'wrong' }), [
      'config.tls.client_key_password',
    ]);
    assert.deepEqual(paths({ server_name: '127.0.0.1' }), ['config.tls.server_name']);
    assert.deepEqual(paths({ server_name: 'bad name' }), ['config.tls.server_name']);
    assert.deepEqual(paths({ min_version: 'TLSv1.1' as 'TLSv1.2' }), ['config.tls.min_version']);
    // No problem message repeats a key or a password.
    const messages = JSON.stringify(
      tlsProblems({ client_certificate: client.cert, client_key: clientKeyEncrypted, client_key_password: 'wrong' }, now),
    );
    assert.ok(!messages.includes('wrong') && !messages.includes('PRIVATE'));
  });

  test('connectOptions: verification is always on, TLSv1.2 is the floor unless TLSv1.3 is asked for', () => {
    assert.deepEqual(connectOptions({}), {
      ca: undefined,
      cert: undefined,
      key: undefined,
      passphrase: undefined,
      servername: undefined,
      minVersion: 'TLSv1.2',
      rejectUnauthorized: true,
    });
    const options = connectOptions({
      ca: ca.cert,
      client_certificate: client.cert,
      client_key: client.key,
      client_key_password: 'p',
      server_name: 'x.example',
      min_version: 'TLSv1.3',
    });
    assert.deepEqual(options, {
      ca: ca.cert,
      cert: client.cert,
      key: client.key,
      passphrase: 'p',
      servername: 'x.example',
      minVersion: 'TLSv1.3',
      rejectUnauthorized: true,
    });
  });
});

describe('IntegrationDispatchers: one dispatcher per integration version with config.tls, bounded', () => {
  test('integrations without tls share the dispatcher; with tls, one is built per version, reused, and dropped on change', async () => {
    const shared = dispatcherFor();
    const dispatchers = new IntegrationDispatchers({ policy, shared, max: 2 });
    const tls = { ca: ca.cert };
    const key = (integrationId: string, version = 1) => ({ tenantId: 'ten_1', integrationId, version });
    assert.equal(dispatchers.forIntegration(key('int_a'), undefined), shared);
    const a = dispatchers.forIntegration(key('int_a'), tls);
    assert.notEqual(a, shared);
    assert.equal(dispatchers.forIntegration(key('int_a'), tls), a);
    assert.deepEqual(await get(a, plainUrl), { client: null, servername: null });
    const b = dispatchers.forIntegration(key('int_b'), tls);
    const a2 = dispatchers.forIntegration(key('int_a', 2), tls);
    assert.notEqual(a2, a, 'a new version gets a new dispatcher');
    await assert.rejects(request(plainUrl, { dispatcher: a }), { code: 'UND_ERR_CLOSED' }, 'the old version’s is closed');
    assert.deepEqual(await get(a2, plainUrl), { client: null, servername: null });
    assert.deepEqual(await get(b, plainUrl), { client: null, servername: null }, 'another integration’s stays open');
    assert.equal(dispatchers.size, 2);
    await dispatchers.close();
    assert.equal(dispatchers.size, 0);
  });

  test('beyond the bound the least recently used is closed; the others stay open', async () => {
    const dispatchers = new IntegrationDispatchers({ policy, shared: dispatcherFor(), max: 2 });
    const tls = { ca: ca.cert };
    const key = (integrationId: string) => ({ tenantId: 'ten_1', integrationId, version: 1 });
    const a = dispatchers.forIntegration(key('int_a'), tls);
    const b = dispatchers.forIntegration(key('int_b'), tls);
    dispatchers.forIntegration(key('int_a'), tls); // a is now the most recently used
    const c = dispatchers.forIntegration(key('int_c'), tls);
    assert.equal(dispatchers.size, 2);
    await assert.rejects(request(plainUrl, { dispatcher: b }), { code: 'UND_ERR_CLOSED' });
    assert.deepEqual(await get(a, plainUrl), { client: null, servername: null });
    assert.deepEqual(await get(c, plainUrl), { client: null, servername: null });
    assert.notEqual(dispatchers.forIntegration(key('int_b'), tls), b, 'an evicted integration gets a new dispatcher');
    await dispatchers.close();
  });
});
