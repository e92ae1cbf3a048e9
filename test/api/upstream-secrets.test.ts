import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type Harness, harness } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { TestPki } from '../support/test-pki.ts';
import { makeTestKeys, type TestKeys } from '../support/wsse-tools.ts';

/**
 * Every secret field of issue 19 (`password`, `client_secret`, `token`, `value`, `private_key`, `private_key_password`,
 * `client_key`, `client_key_password`) set on an integration, then grepped for in every answer, every executions
 * record and the server's log at LOG_LEVEL=debug, while an upstream echoes back everything it was sent (headers and
 * body, in an error) and the token endpoint echoes the client's credentials in its refusal.
 */

const secret = (name: string) => `${name}-Secret-${'x7Q2'.repeat(3)}`;
const secrets = {
  password: secret('basic-password'),
  token: secret('bearer-token'),
  value: secret('header-value'),
  client_secret: secret('oauth-client'),
  ws_password: secret('wsse-password'),
  key_password: secret('key-password'),
};

describe('every secret of upstream credentials stays secret', () => {
  let h: Harness;
  let auth: { key: string; tenant: string };
  let echo: RawUpstream;
  let keys: TestKeys;
  const pki = new TestPki();
  let clientKey = '';
  const logs = new PassThrough();
  let logged = '';
  logs.on('data', (chunk) => {
    logged += String(chunk);
  });
  const answers: string[] = [];

  /** What must never show, as sent and in the forms an upstream echoes (base64 of a Basic value, a PEM's body). */
  const forbidden = () => [
    ...Object.values(secrets),
    Buffer.from(`ada:${secrets.password}`).toString('base64'),
    Buffer.from(`interchange:${secrets.client_secret}`).toString('base64'),
    keys.rsa.privateKey.split('\n')[1],
    keys.encryptedRsaKey.split('\n')[1],
    clientKey.split('\n')[1],
  ];

  async function call(method: 'GET' | 'PUT' | 'POST', url: string, payload?: Record<string, unknown>) {
    const res = await h.call(auth, { method, url, ...(payload === undefined ? {} : { payload }) });
    answers.push(res.body);
    return res;
  }

  before(async () => {
    keys = makeTestKeys();
    pki.ca('ca', 'Secrets CA');
    const client = pki.sign('ca', 'client', { cn: 'client', usage: 'clientAuth' });
    clientKey = pki.encryptedKey('client', secrets.key_password);
    echo = await httpUpstream((req, res, text) => {
      const seen = `${JSON.stringify(req.headers)} ${text}`;
      if (req.url === '/token') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_client', error_description: `refused ${seen}` }));
        return;
      }
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`failed for ${seen}`);
    });
    h = await harness({ LOG_LEVEL: 'debug' }, { logStream: logs });
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
    const graphql = (config: Record<string, unknown>) => ({
      connector: 'graphql-1.0.0',
      config: { base_url: echo.url, ...config },
    });
    const integrations: Record<string, { connector: string; config: Record<string, unknown> }> = {
      basic: graphql({ auth: { type: 'basic', username: 'ada', password: secrets.password } }),
      bearer: graphql({ auth: { type: 'bearer', token: secrets.token } }),
      header: graphql({ auth: { type: 'header', name: 'X-Key', value: secrets.value } }),
      oauth: graphql({
        auth: {
          type: 'oauth2_client_credentials',
          token_url: `${echo.url}/token`,
          client_id: 'interchange',
          client_secret: secrets.client_secret,
        },
      }),
      tls: graphql({
        tls: { client_certificate: client.cert, client_key: clientKey, client_key_password: secrets.key_password },
      }),
      wsse: {
        connector: 'soap-1.0.0',
        config: {
          endpoint_url: `${echo.url}/soap`,
          namespace: 'urn:x',
          ws_security: {
            username_token: { username: 'ada', password: secrets.ws_password, password_type: 'text' },
            signature: {
              certificate: keys.rsa.certificate,
              private_key: keys.encryptedRsaKey,
              private_key_password: keys.encryptedPassword,
            },
          },
        },
      },
    };
    for (const [id, payload] of Object.entries(integrations)) {
      const res = await call('PUT', `/api/v1/integrations/${id}`, payload);
      assert.equal(res.statusCode, 201, `${id}: ${res.body}`);
      const request =
        id === 'wsse'
          ? { operation: 'send', method: 'Add', params: { a: 1 } }
          : { operation: 'receive', query: '{ items { id } }' };
      const ran = await call('POST', `/api/v1/integrations/${id}/execute`, request);
      assert.equal(ran.statusCode, 502, `${id}: the upstream failed on purpose: ${ran.body}`);
      await call('GET', `/api/v1/integrations/${id}`);
    }
    const list = await call('GET', '/api/v1/executions?limit=100');
    for (const execution of JSON.parse(list.body).data as { id: string }[]) {
      await call('GET', `/api/v1/executions/${execution.id}`);
    }
    await call('GET', '/api/v1/integrations?limit=100');
  });
  after(async () => {
    await echo.close();
    await h.close();
    keys.remove();
    pki.remove();
  });

  test('the upstream did echo them: what is checked below is redaction, not silence', () => {
    const excerpts = answers.join('\n');
    assert.match(excerpts, /\[REDACTED\]/);
    assert.ok(answers.length > 15);
  });

  test('no answer, executions record or list shows any secret', () => {
    for (const value of forbidden()) {
      for (const answer of answers) assert.ok(!answer.includes(value), `an answer shows ${value.slice(0, 12)}…`);
    }
  });

  test('the log at debug holds none of them', () => {
    assert.ok(logged.length > 0);
    for (const value of forbidden()) assert.ok(!logged.includes(value), `the log shows ${value.slice(0, 12)}…`);
  });

  test('storage holds them encrypted only', async () => {
    const rows = await h.storage.db.selectFrom('integrations').selectAll().execute();
    const stored = JSON.stringify(rows);
    for (const value of forbidden()) assert.ok(!stored.includes(value), `storage shows ${value.slice(0, 12)}…`);
  });
});
