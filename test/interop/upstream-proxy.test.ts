import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import { ApiError } from '../../src/core/errors.ts';
import { createEgressDispatcher, type Resolver } from '../../src/egress/dispatcher.ts';
import { createEgressPolicy, type EgressPolicyOptions } from '../../src/egress/policy.ts';
import { proxyFor, proxySettingsFromEnv } from '../../src/egress/proxy-env.ts';
import { connectOptions, type TlsConfig } from '../../src/egress/tls.ts';
import { sendUpstream } from '../../src/transport/upstream.ts';
import { freePort } from '../support/processes.ts';
import { TestPki } from '../support/test-pki.ts';
import { startTinyproxy, type Tinyproxy } from '../support/tinyproxy.ts';
import { until } from '../support/until.ts';

const pki = new TestPki();
let tls: TlsConfig;
let proxy: Tinyproxy;
let httpsPort: number;
let httpPort: number;
let mtlsPort: number;
let mtls: TlsConfig;
let refusedPort: number;
const servers: Server[] = [];
const open: Dispatcher[] = [];

/** What the upstream saw: the SNI name (https) and the Host header. */
type Seen = { servername: string | null; host: string | undefined };

before(async () => {
  const ca = pki.ca('ca', 'Proxy test CA');
  const server = pki.sign('ca', 'server', { cn: 'localhost', san: 'DNS:localhost,IP:127.0.0.1', usage: 'serverAuth' });
  tls = { ca: ca.cert };
  const https = createHttpsServer({ cert: server.cert, key: server.key }, (req, res) => {
    res.end(JSON.stringify({ servername: (req.socket as TLSSocket).servername || null, host: req.headers.host }));
  });
  const http = createHttpServer((req, res) => res.end(JSON.stringify({ servername: null, host: req.headers.host })));
  const clientCa = pki.ca('client-ca', 'Proxy test client CA');
  const client = pki.sign('client-ca', 'client', { cn: 'through-the-tunnel', usage: 'clientAuth' });
  mtls = { ca: ca.cert, client_certificate: client.cert, client_key: client.key };
  const mutual = createHttpsServer(
    { cert: server.cert, key: server.key, ca: clientCa.cert, requestCert: true, rejectUnauthorized: true },
    (req, res) => res.end(JSON.stringify({ client: (req.socket as TLSSocket).getPeerCertificate().subject.CN })),
  );
  for (const s of [https, http, mutual]) {
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    servers.push(s);
  }
  httpsPort = (https.address() as AddressInfo).port;
  httpPort = (http.address() as AddressInfo).port;
  mtlsPort = (mutual.address() as AddressInfo).port;
  // A port the proxy may tunnel to where nothing listens, and one it may not tunnel to at all (any other).
  refusedPort = await freePort();
  proxy = await startTinyproxy([httpsPort, httpPort, mtlsPort, refusedPort]);
});

after(async () => {
  await Promise.all(open.map((dispatcher) => dispatcher.close()));
  for (const s of servers) s.close();
  await proxy.stop();
  pki.remove();
});

function dispatcher(env: NodeJS.ProcessEnv, options: { policy?: EgressPolicyOptions; resolve?: Resolver; tls?: TlsConfig } = {}) {
  const built = createEgressDispatcher(createEgressPolicy(options.policy ?? { allowPrivate: true }), {
    proxies: proxySettingsFromEnv(env),
    tls: options.tls ? connectOptions(options.tls) : undefined,
    resolve: options.resolve,
  });
  open.push(built);
  return built;
}

async function get(through: Dispatcher, url: string): Promise<Seen> {
  const response = await sendUpstream(through, { url, method: 'GET', headers: {}, timeoutMs: 30_000, maxBodyBytes: 65_536 });
  assert.equal(response.status, 200);
  return JSON.parse(response.body.toString());
}

async function failure(through: Dispatcher, url: string, code: string): Promise<ApiError> {
  const err = await get(through, url).then(
    () => assert.fail(`expected ${code}, the call succeeded`),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${err}`);
  assert.equal(err.code, code, err.message);
  return err;
}

describe('outbound proxies: HTTPS_PROXY, HTTP_PROXY and NO_PROXY (docs/security.md#outbound-proxies), through a real tinyproxy', () => {
  test("an https upstream is reached through the proxy's CONNECT tunnel, verified with the integration's private CA", async () => {
    const before = proxy.connects().length;
    const seen = await get(dispatcher({ HTTPS_PROXY: proxy.url }, { tls }), `https://localhost:${httpsPort}/`);
    // SNI and verification use the upstream's own name; the tunnel goes to the address Interchange resolved and judged.
    assert.deepEqual(seen, { servername: 'localhost', host: `localhost:${httpsPort}` });
    await until(() => proxy.connects().length > before, 'tinyproxy logs the CONNECT');
    assert.deepEqual(proxy.connects().slice(before), [`127.0.0.1:${httpsPort}`]);
  });

  test("the integration's client certificate is presented to the upstream inside the tunnel (mutual TLS through the proxy)", async () => {
    const before = proxy.connects().length;
    const response = await sendUpstream(dispatcher({ HTTPS_PROXY: proxy.url }, { tls: mtls }), {
      url: `https://localhost:${mtlsPort}/`,
      method: 'GET',
      headers: {},
      timeoutMs: 30_000,
      maxBodyBytes: 65_536,
    });
    assert.deepEqual(JSON.parse(response.body.toString()), { client: 'through-the-tunnel' });
    await until(() => proxy.connects().length > before, 'tinyproxy logs the CONNECT');
    assert.deepEqual(proxy.connects().slice(before), [`127.0.0.1:${mtlsPort}`]);
  });

  test('credentials in the proxy URL are sent as Proxy-Authorization; without them the proxy answers 407', async () => {
    const guarded = await startTinyproxy([httpsPort], { basicAuth: { user: 'ix', password: 'pr0xy-pass' } });
    try {
      const url = new URL(guarded.url);
      url.username = 'ix';
      url.password = 'pr0xy-pass';
      const seen = await get(dispatcher({ HTTPS_PROXY: url.href }, { tls }), `https://localhost:${httpsPort}/`);
      assert.equal(seen.servername, 'localhost');
      await until(() => guarded.connects().length > 0, 'tinyproxy logs the CONNECT');
      assert.deepEqual(guarded.connects(), [`127.0.0.1:${httpsPort}`]);
      const refused = await failure(
        dispatcher({ HTTPS_PROXY: guarded.url }, { tls }),
        `https://localhost:${httpsPort}/`,
        'upstream_unreachable',
      );
      assert.deepEqual(refused.details, { cause: 'proxy', proxy_status: 407 });
    } finally {
      await guarded.stop();
    }
  });

  test('lower-case https_proxy works too; the tunnel carries the TLS, so without the private CA verification fails', async () => {
    const before = proxy.connects().length;
    const err = await failure(dispatcher({ https_proxy: proxy.url }), `https://localhost:${httpsPort}/`, 'upstream_unreachable');
    assert.equal(err.details?.tls_error, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    await until(() => proxy.connects().length > before, 'tinyproxy logs the CONNECT');
    assert.deepEqual(proxy.connects().slice(before), [`127.0.0.1:${httpsPort}`]);
  });

  test('an http upstream goes through HTTP_PROXY (tunnelled too), not through HTTPS_PROXY', async () => {
    const before = proxy.connects().length;
    assert.deepEqual(await get(dispatcher({ HTTP_PROXY: proxy.url }), `http://127.0.0.1:${httpPort}/`), {
      servername: null,
      host: `127.0.0.1:${httpPort}`,
    });
    await until(() => proxy.connects().length > before, 'tinyproxy logs the CONNECT');
    assert.deepEqual(proxy.connects().slice(before), [`127.0.0.1:${httpPort}`]);
    await get(dispatcher({ HTTPS_PROXY: proxy.url }), `http://127.0.0.1:${httpPort}/`);
    assert.equal(proxy.connects().length, before + 1, 'HTTPS_PROXY is not used for http');
  });

  test('NO_PROXY naming the host bypasses the proxy; loopback is proxied unless NO_PROXY names it', async () => {
    const before = proxy.connections();
    const url = `https://localhost:${httpsPort}/`;
    for (const noProxy of ['localhost', `localhost:${httpsPort}`, '.localhost', '*']) {
      assert.equal((await get(dispatcher({ HTTPS_PROXY: proxy.url, NO_PROXY: noProxy }, { tls }), url)).servername, 'localhost');
    }
    await get(dispatcher({ HTTPS_PROXY: proxy.url, no_proxy: '127.0.0.1' }, { tls }), `https://127.0.0.1:${httpsPort}/`);
    assert.equal(proxy.connections(), before, 'the proxy saw no connection');
    // Names that are not this host, or this host on another port, leave it proxied.
    await get(dispatcher({ HTTPS_PROXY: proxy.url, NO_PROXY: 'example.com,localhost:1,127.0.0.2' }, { tls }), url);
    // tinyproxy's log reaches this process by a pipe, a moment after its answer may.
    await until(() => proxy.connections() >= before + 1, 'tinyproxy logs the connection');
    assert.equal(proxy.connections(), before + 1);
  });

  test('a target the egress policy refuses is refused before the proxy sees anything', async () => {
    const before = proxy.log();
    const denyLoopback = { allowPrivate: true, deny: ['127.0.0.0/8'] };
    const denied = await failure(
      dispatcher({ HTTPS_PROXY: proxy.url }, { policy: denyLoopback, tls }),
      `https://localhost:${httpsPort}/`,
      'egress_denied',
    );
    assert.match(denied.message, /IX_EGRESS_DENY/);
    // A name that resolves to the metadata address, and the address itself.
    const metadata: Resolver = async () => [{ address: '169.254.169.254', family: 4 }];
    await failure(dispatcher({ HTTPS_PROXY: proxy.url }, { resolve: metadata }), 'https://metadata.test/', 'egress_denied');
    await failure(dispatcher({ HTTP_PROXY: proxy.url }), 'http://169.254.169.254/latest/', 'egress_denied');
    assert.equal(proxy.log(), before, 'nothing in the proxy log');
  });

  test('the tunnel goes to the address that was judged: a name that rebinds can not send the proxy elsewhere', async () => {
    // The first answer is judged and used; a later answer (what the proxy would get if it resolved the name) is not.
    let answers = 0;
    const rebinding: Resolver = async () => [{ address: answers++ === 0 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
    const before = proxy.connects().length;
    const seen = await get(
      dispatcher({ HTTPS_PROXY: proxy.url }, { resolve: rebinding, tls }),
      `https://localhost:${httpsPort}/`,
    );
    assert.equal(seen.servername, 'localhost');
    await until(() => proxy.connects().length > before, 'tinyproxy logs the CONNECT');
    assert.deepEqual(proxy.connects().slice(before), [`127.0.0.1:${httpsPort}`]);
  });

  test('a proxy that refuses the tunnel, or can not be reached, is upstream_unreachable with cause proxy', async () => {
    const refused = await failure(
      dispatcher({ HTTPS_PROXY: proxy.url }, { tls }),
      'https://127.0.0.1:9/',
      'upstream_unreachable',
    );
    assert.deepEqual(refused.details, { cause: 'proxy', proxy_status: 403 });
    assert.equal(refused.message, 'The outbound proxy did not open a tunnel (403). 127.0.0.1 was not reached.');
    const down = `http://user:s3cret@127.0.0.1:${await freePort()}`;
    const unreachable = await failure(
      dispatcher({ HTTPS_PROXY: down }, { tls }),
      `https://localhost:${httpsPort}/`,
      'upstream_unreachable',
    );
    assert.equal(unreachable.details?.cause, 'proxy');
    assert.match(unreachable.message, /could not be reached \(ECONNREFUSED\)/);
    // The proxy is the operator's: neither its address nor its credentials reach an answer.
    const shown = JSON.stringify({ m: unreachable.message, d: unreachable.details });
    assert.ok(!shown.includes('s3cret') && !shown.includes(down.split(':').at(-1) ?? ''), shown);
    // Through the tunnel, a port where nothing listens: the proxy answers, the upstream is not there.
    const nothing = await failure(
      dispatcher({ HTTPS_PROXY: proxy.url }, { tls }),
      `https://127.0.0.1:${refusedPort}/`,
      'upstream_unreachable',
    );
    assert.equal(nothing.details?.cause, 'proxy');
    assert.ok(Number(nothing.details?.proxy_status) >= 500, 'tinyproxy answers 5xx when it can not connect');
    // tinyproxy may write its log line a moment after its answer: polled, with a ceiling that only catches a hang.
    const logged = new RegExp(`Could not establish a connection to 127\\.0\\.0\\.1:${refusedPort}`);
    await until(() => logged.test(proxy.log()), 'tinyproxy logs the refused connection');
  });
});

describe('proxySettingsFromEnv and proxyFor: the usual forms of the variables', () => {
  const settings = (env: NodeJS.ProcessEnv) => proxySettingsFromEnv(env);
  const via = (env: NodeJS.ProcessEnv, url: string) => {
    const u = new URL(url);
    return proxyFor(settings(env), u.protocol, u.hostname, Number(u.port) || undefined)?.href;
  };

  test('lower case wins over upper case; an empty value is unset; a bare host:port is http://', () => {
    assert.equal(via({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2' }, 'https://x.example/'), 'http://a:1/');
    assert.equal(via({ https_proxy: '', HTTPS_PROXY: 'http://b:2' }, 'https://x.example/'), 'http://b:2/');
    assert.equal(via({ HTTP_PROXY: 'proxy.internal:3128' }, 'http://x.example/'), 'http://proxy.internal:3128/');
    assert.equal(via({ HTTP_PROXY: 'http://a:1' }, 'https://x.example/'), undefined);
    assert.throws(() => settings({ HTTPS_PROXY: 'socks5://a:1' }), TypeError);
  });

  test('NO_PROXY: hosts, domain suffixes with or without a leading dot or *., ports, IPv6, * for all, commas or spaces', () => {
    const env = { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'example.com, .corp.test *.svc.local,10.0.0.1,[::1]:8443,api.host:444' };
    for (const direct of [
      'https://example.com/',
      'https://api.example.com/',
      'https://a.corp.test/',
      'https://corp.test/',
      'https://x.svc.local/',
      'https://10.0.0.1/',
      'https://[::1]:8443/',
      'https://api.host:444/',
      'https://EXAMPLE.COM./',
    ]) {
      assert.equal(via(env, direct), undefined, direct);
    }
    for (const proxied of [
      'https://notexample.com/',
      'https://10.0.0.10/',
      'https://[::1]/',
      'https://api.host/',
      'https://localhost/',
    ]) {
      assert.equal(via(env, proxied), 'http://p:1/', proxied);
    }
    assert.equal(via({ HTTPS_PROXY: 'http://p:1', no_proxy: '*' }, 'https://anything.example/'), undefined);
  });
});
