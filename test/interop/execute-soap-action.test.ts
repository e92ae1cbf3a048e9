import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, issuePaths, assertOk as ok } from '../support/assertions.ts';
import { type Harness, harness } from '../support/harness.ts';
import { type PhpSoapServer, type SoapLogEntry, startPhpSoapServer } from '../support/php-soap-server.ts';

/**
 * The SOAP action travels as the WSDL declares it or the caller gives it (WSDL 1.1 §3.4, RFC 9110 §5.6.4): end to end
 * against PHP's SoapServer, whose log holds the SOAPAction and Content-Type headers as they arrived.
 */

type Auth = { key: string; tenant: string };
const RAW = 'http://example.com/raw';

/** The header that carries the action, as the server received it: SOAPAction (1.1) or the Content-Type (1.2). */
function sentAction(entry: SoapLogEntry, version: '1.1' | '1.2'): string | null {
  return version === '1.1' ? entry.soapAction : entry.contentType;
}
/** What `sentAction` holds for an action written as the quoted-string `quoted`. */
function expected(version: '1.1' | '1.2', quoted: string): string {
  return version === '1.1' ? quoted : `application/soap+xml; charset=utf-8; action=${quoted}`;
}

describe('the SOAP action on the wire', () => {
  let h: Harness;
  let auth: Auth;
  let soap: PhpSoapServer;

  const run = (id: string, payload: Record<string, unknown>) =>
    h.call(auth, { method: 'POST', url: `/api/v1/integrations/${id}/execute`, payload });
  /** The POSTs the server received since its log was last cleared; clears the log. */
  function posts(): SoapLogEntry[] {
    const log = soap.log().filter((entry) => entry.method === 'POST');
    soap.clearLog();
    return log;
  }

  before(async () => {
    [h, soap] = await Promise.all([harness(), startPhpSoapServer()]);
    await h.tenant('acme');
    auth = { key: (await h.key('acme', ['integrations.*'])).key, tenant: 'acme' };
    for (const [id, config] of Object.entries({
      wsdl: { endpoint_url: soap.url('/actions?wsdl') },
      raw: { endpoint_url: soap.url('/raw'), namespace: RAW },
      raw12: { endpoint_url: soap.url('/raw'), namespace: RAW, soap_version: '1.2' },
      badns: { endpoint_url: soap.url('/raw'), namespace: 'urn:calc\nX-Injected: 1' },
    })) {
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${id}`,
        payload: { connector: 'soap-1.0.0', config },
      });
      assert.equal(put.statusCode, 201, put.body);
    }
    soap.clearLog();
  });
  after(async () => {
    await Promise.all([h.close(), soap.close()]);
  });

  const ports = [
    ['1.1', 'ActionsSoap'],
    ['1.2', 'ActionsSoap12'],
  ] as const;

  test('WSDL mode: the soapAction as declared, a space as is, " and \\ quoted, beyond ASCII percent-encoded', async () => {
    const cases = [
      ['Echo', { message: 'hi' }, { EchoResult: 'hi' }, '"CUCM:DB ver=14.0 listPhone"'],
      ['Add', { a: 2, b: 3 }, { AddResult: 5 }, '"urn:calc \\"Add\\" C:\\\\ops\\\\add"'],
      ['SumList', { numbers: [1, 2] }, { SumListResult: 3 }, '"urn:calc/%CE%A3um"'],
    ] as const;
    for (const [version, port] of ports) {
      for (const [method, params, answer, quoted] of cases) {
        assert.deepEqual(ok(await run('wsdl', { operation: 'send', method, params, port })), answer);
        const [sent] = posts();
        assert.equal(sentAction(sent, version), expected(version, quoted), `${method} over SOAP ${version}`);
        if (version === '1.2') assert.equal(sent.soapAction, null);
      }
    }
  });

  test('WSDL mode: a declared soapAction with CR LF is 422 integration_misconfigured, nothing sent; soap_action overrides it', async () => {
    for (const [version, port] of ports) {
      const error = assertError(
        await run('wsdl', { operation: 'send', method: 'WhoAmI', port }),
        422,
        'integration_misconfigured',
      );
      assert.match(error.message, new RegExp(`soapAction for WhoAmI on port ${port} holds U\\+000D, a control character`));
      assert.match(error.message, /soap_action/);
      assert.deepEqual(error.details, { operation: 'WhoAmI', port });
      // In a sync, the inbound part's action is found before the outbound part is sent.
      const sync = await run('wsdl', {
        operation: 'sync',
        outbound: { method: 'Echo', params: { message: 'x' }, port },
        inbound: { method: 'WhoAmI', port },
      });
      assert.equal(assertError(sync, 422, 'integration_misconfigured').details?.stage, 'inbound');
      assert.deepEqual(posts(), []);

      const given = 'urn:calc WhoAmI "given"';
      assert.deepEqual(ok(await run('wsdl', { operation: 'send', method: 'WhoAmI', port, soap_action: given })), {
        WhoAmIResult: '',
      });
      assert.equal(sentAction(posts()[0], version), expected(version, '"urn:calc WhoAmI \\"given\\""'));
    }
  });

  test('raw mode: soap_action as given, with a space, a quote, a backslash and beyond ASCII, in SOAP 1.1 and 1.2', async () => {
    const cases = [
      ['CUCM:DB ver=14.0 listPhone', '"CUCM:DB ver=14.0 listPhone"'],
      ['urn:a "b" c\\d', '"urn:a \\"b\\" c\\\\d"'],
      ['urn:\\', '"urn:\\\\"'],
      ['urn:ü\tx', '"urn:%C3%BC\tx"'],
    ] as const;
    for (const [id, version] of [
      ['raw', '1.1'],
      ['raw12', '1.2'],
    ] as const) {
      for (const [action, quoted] of cases) {
        const answer = ok(await run(id, { operation: 'send', method: 'Echo', params: { message: 'x' }, soap_action: action }));
        assert.equal(answer.EchoResult.$value, 'x');
        assert.equal(sentAction(posts()[0], version), expected(version, quoted), `${JSON.stringify(action)} over ${version}`);
      }
    }
  });

  test('a soap_action no header can carry: 400 validation_failed at its path, in either mode, and nothing sent', async () => {
    for (const id of ['raw', 'raw12', 'wsdl']) {
      const method = 'Echo';
      const payload = { operation: 'send', method, params: { message: 'x' }, soap_action: 'urn:a\r\nX-Injected: 1' };
      const error = assertError(await run(id, payload), 400, 'validation_failed');
      assert.deepEqual(error.details?.issues, [
        { path: 'soap_action', message: 'holds U+000D, a control character no HTTP header can carry' },
      ]);
      const sync = await run(id, {
        operation: 'sync',
        outbound: { method, params: { message: 'x' } },
        inbound: { method, params: { message: 'y' }, soap_action: 'a\u007fb' },
      });
      assert.deepEqual(issuePaths(sync), ['inbound.soap_action']);
    }
    // Raw mode derives the action from a request's namespace: one with LF is refused there.
    const byNamespace = await run('raw', { operation: 'send', method: 'Echo', namespace: 'urn:a\nb' });
    assert.deepEqual(issuePaths(byNamespace), ['namespace']);
    assert.deepEqual(posts(), []);
  });

  test('raw mode: an action derived from a configured namespace with LF is 422 integration_misconfigured naming config.namespace', async () => {
    const error = assertError(await run('badns', { operation: 'send', method: 'Echo' }), 422, 'integration_misconfigured');
    assert.deepEqual(error.details, { field: 'config.namespace' });
    assert.match(error.message, /holds U\+000A/);
    assert.deepEqual(posts(), []);
    // A soap_action of its own needs no namespace to derive it from.
    ok(await run('badns', { operation: 'send', method: 'Echo', params: { message: 'x' }, soap_action: 'urn:calc Echo' }));
    assert.equal(posts()[0].soapAction, '"urn:calc Echo"');
  });
});
