import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk } from '../support/assertions.ts';
import { body, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { httpUpstream, type RawUpstream } from '../support/raw-upstream.ts';
import { makeTestKeys, pythonPasswordDigest, type TestKeys, xmlsecVerify } from '../support/wsse-tools.ts';

/**
 * `config.ws_security` end to end through the execute endpoint (issue 19; docs/security.md#ws-security): what a
 * SOAP integration sends in WSDL and raw mode, SOAP 1.1 and 1.2, is checked by what we did not write — xmlsec1
 * verifies the signature (and refuses the message once its Body is changed), Python recomputes the UsernameToken
 * digest — while `test` sends nothing signed and reports the parts. Keys and certificates come from openssl.
 */

const password = 'wsse-Password-9e41d7c2';
const calculator = readFileSync(new URL('../support/fixtures/soap/calculator.wsdl', import.meta.url), 'utf8');
const answer =
  '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><AddResponse xmlns="http://example.com/calculator"><AddResult>5</AddResult></AddResponse></s:Body></s:Envelope>';

describe('config.ws_security: signed and token-carrying SOAP messages, verified by xmlsec1 and Python', () => {
  let keys: TestKeys;
  let h: Harness;
  let auth: { key: string; tenant: string };
  let upstream: RawUpstream;
  /** Every POST body the upstream received. */
  const posted: string[] = [];

  const calls = integrationCalls(() => ({ h, auth }));
  const put = (id: string, config: Record<string, unknown>) => calls.put(id, 'soap-1.0.0', config);
  const { execute } = calls;
  const add = { operation: 'send', method: 'Add', params: { a: 2, b: 3 } };

  before(async () => {
    keys = makeTestKeys();
    upstream = await httpUpstream((req, res, text) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(calculator.replaceAll('__BASE_URL__', upstream.url));
        return;
      }
      posted.push(text);
      const soap12 = /soap-envelope/.test(text) && !/schemas\.xmlsoap\.org\/soap\/envelope/.test(text);
      res
        .writeHead(200, { 'content-type': soap12 ? 'application/soap+xml' : 'text/xml' })
        .end(
          soap12
            ? answer.replace('http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope')
            : answer,
        );
    });
    h = await harness();
    await h.tenant('acme');
    auth = await h.auth('acme', ['*']);
  });
  after(async () => {
    await upstream.close();
    await h.close();
    keys.remove();
  });

  test('WSDL mode, SOAP 1.1 and 1.2: the Body and Timestamp signed, xmlsec1 verifies, and refuses a changed Body', async () => {
    for (const [id, port] of [
      ['signed11', 'CalculatorSoap'],
      ['signed12', 'CalculatorSoap12'],
    ]) {
      const res = await put(id, {
        endpoint_url: `${upstream.url}/calculator?wsdl`,
        ws_security: {
          timestamp: { ttl_seconds: 300 },
          signature: { certificate: keys.rsa.certificate, private_key: keys.rsa.privateKey },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      assertOk(await execute(id, { ...add, port }));
      const sent = posted.at(-1) as string;
      assert.match(sent, /mustUnderstand="(1|true)"/);
      const verified = xmlsecVerify(sent, keys.rsa.certificatePath);
      assert.ok(verified.ok, `${id}: ${verified.output}`);
      // The param a = 2 is the message's only element text `2`.
      const tampered = sent.replace(/>2</, '>7<');
      assert.notEqual(tampered, sent, 'the Body was changed');
      assert.equal(xmlsecVerify(tampered, keys.rsa.certificatePath).ok, false, `${id}: the changed Body is refused`);
    }
  });

  test('raw mode: a digest UsernameToken that Python recomputes; a fresh nonce on every message', async () => {
    const res = await put('token', {
      endpoint_url: `${upstream.url}/calculator`,
      namespace: 'http://example.com/calculator',
      ws_security: { username_token: { username: 'ada', password, password_type: 'digest' } },
    });
    assert.equal(res.statusCode, 201, res.body);
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      assertOk(await execute('token', add));
      const sent = posted.at(-1) as string;
      const digest = /<wsse:Password[^>]*PasswordDigest[^>]*>([^<]+)</.exec(sent)?.[1];
      const nonce = /<wsse:Nonce[^>]*>([^<]+)</.exec(sent)?.[1];
      const created = /<wsu:Created>([^<]+)</.exec(sent)?.[1];
      assert.ok(digest && nonce && created, sent);
      assert.equal(digest, pythonPasswordDigest(nonce, created, password));
      assert.ok(!sent.includes(password), 'the password itself is not sent');
      nonces.push(nonce);
    }
    assert.notEqual(nonces[0], nonces[1]);
  });

  test('answers show the certificate’s facts and <secret>_set; test reports the parts and sends nothing signed', async () => {
    await put('shown', {
      endpoint_url: `${upstream.url}/calculator`,
      namespace: 'http://example.com/calculator',
      ws_security: {
        username_token: { username: 'ada', password },
        signature: { certificate: keys.ec.certificate, private_key: keys.ec.privateKey, signature_algorithm: 'ecdsa-sha256' },
      },
    });
    const shown = body(await h.call(auth, { method: 'GET', url: '/api/v1/integrations/shown' })).data.config.ws_security;
    assert.deepEqual(shown.username_token, { username: 'ada', password_set: true });
    assert.equal(shown.signature.private_key_set, true);
    assert.equal(shown.signature.private_key_password_set, false);
    assert.ok(typeof shown.signature.certificate.subject === 'string' && shown.signature.certificate.not_after);
    assert.ok(!JSON.stringify(shown).includes('BEGIN'));
    const row = await h.storage.db.selectFrom('integrations').selectAll().where('id', '=', 'shown').executeTakeFirstOrThrow();
    assert.ok(!row.secrets.includes('PRIVATE KEY') && !row.secrets.includes(password));

    const before = posted.length;
    const tested = assertOk(await execute('shown', { operation: 'test' }));
    assert.equal(posted.length, before, 'test posts nothing');
    assert.equal(tested.details.ws_security.username_token, true);
    assert.equal(tested.details.ws_security.timestamp, false);
    assert.ok(tested.details.ws_security.signature.subject);
  });

  test('PUT refuses a key that is not the certificate’s, an expired certificate, a wrong algorithm, at their paths', async () => {
    const paths = async (wsSecurity: Record<string, unknown>) => {
      const res = await put('bad', { endpoint_url: `${upstream.url}/calculator`, ws_security: wsSecurity });
      assertError(res, 400, 'validation_failed');
      return (body(res).error.details.issues as { path: string }[]).map((issue) => issue.path);
    };
    const signature = { certificate: keys.rsa.certificate, private_key: keys.rsa.privateKey };
    assert.ok(
      (await paths({ signature: { ...signature, private_key: keys.otherRsa.privateKey } })).includes(
        'config.ws_security.signature.private_key',
      ),
    );
    assert.ok(
      (await paths({ signature: { ...signature, certificate: keys.expiredCertificate } })).includes(
        'config.ws_security.signature.certificate',
      ),
    );
    assert.ok(
      (await paths({ signature: { ...signature, signature_algorithm: 'ecdsa-sha256' } })).some((path) =>
        path.startsWith('config.ws_security.signature'),
      ),
    );
    assert.ok((await paths({ signature: { ...signature, sign: ['timestamp'] } })).includes('config.ws_security.signature.sign'));
  });
});
