import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { requestHeaders } from '../../src/connectors/soap/envelope.ts';
import { maxMimeParts } from '../../src/connectors/soap/mime.ts';
import { assertError, assertOk as ok } from '../support/assertions.ts';
import type { FixtureProcess } from '../support/fixture-process.ts';
import { type Auth, type Harness, harness, integrationCalls } from '../support/harness.ts';
import { filesNamespace, startJaxwsFilesServer } from '../support/jaxws-server.ts';

/**
 * Answers in MIME packages (issue 23, mime.ts): MTOM/XOP from a real JAX-WS service (the Metro reference
 * implementation, test/support/fixtures/jaxws/Files.java), and packages shaped as Spring-WS (MTOM) and Axis 1 (SOAP with
 * Attachments) send them, from a raw node:http server, with broken ones beside them.
 */

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const XOP = 'http://www.w3.org/2004/08/xop/include';

/** `size` bytes counting 0, 1, 2, … modulo 251, as Files.download makes them. */
const counting = (size: number) => Buffer.from(Array.from({ length: size }, (_, i) => i % 251));

describe('answers in MIME packages: MTOM/XOP and SOAP with Attachments', () => {
  let jaxws: FixtureProcess;
  let packaged: Server;
  let packagedUrl: string;
  /** What the raw server answers next: its Content-Type and body. */
  let next: { contentType: string; body: Buffer } = { contentType: 'text/xml', body: Buffer.alloc(0) };
  let h: Harness;
  let auth: Auth;

  const { put, execute } = integrationCalls(() => ({ h, auth }));

  before(async () => {
    jaxws = await startJaxwsFilesServer();
    packaged = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': next.contentType }).end(next.body));
    });
    await new Promise<void>((done) => packaged.listen(0, '127.0.0.1', done));
    packagedUrl = `http://127.0.0.1:${(packaged.address() as AddressInfo).port}/svc`;
    h = await harness();
    await h.tenant('mtom');
    auth = await h.auth('mtom', ['*']);
    const files = await put('files', 'soap-1.0.0', { endpoint_url: jaxws.url('/files?wsdl') });
    assert.equal(files.statusCode, 201, files.body);
    const raw = await put('packaged', 'soap-1.0.0', { endpoint_url: packagedUrl, namespace: 'urn:packaged' });
    assert.equal(raw.statusCode, 201, raw.body);
  });
  after(async () => {
    await h?.close();
    packaged?.closeAllConnections();
    await new Promise((done) => packaged?.close(done));
    await jaxws?.close();
  });

  test('JAX-WS answers Interchange with MTOM, and the bytes come back as the base64 text they stand for', async () => {
    // What JAX-WS answers to the headers Interchange sends: a multipart/related package with an xop:Include.
    const direct = await fetch(jaxws.url('/files'), {
      method: 'POST',
      headers: requestHeaders({ version: '1.1', soapAction: '' }),
      body: `<s:Envelope xmlns:s="${SOAP11}"><s:Body><f:download xmlns:f="${filesNamespace}"><size>3</size></f:download></s:Body></s:Envelope>`,
    });
    assert.match(direct.headers.get('content-type') ?? '', /^multipart\/related;.*application\/xop\+xml/);
    assert.match(await direct.text(), /xop:Include|Include xmlns/);

    // 1 MiB: read by a worker thread (answers from 1 MiB on), which unpacks the package the same way.
    for (const size of [1, 2048, 300_000, 1 << 20]) {
      const data = ok(await execute('files', { operation: 'send', method: 'download', params: { size } }));
      assert.deepEqual(Object.keys(data), ['return']);
      assert.ok(Buffer.from(data.return, 'base64').equals(counting(size)), `${size} bytes`);
    }
  });

  test('bytes sent inline (base64Binary) reach JAX-WS whole', async () => {
    const bytes = counting(5000);
    const sum = bytes.reduce((total, b) => (total + b) % 251, 0);
    const data = ok(
      await execute('files', { operation: 'send', method: 'checksum', params: { data: bytes.toString('base64') } }),
    );
    assert.deepEqual(data, { return: `5000:${sum}` });
  });

  test('Spring-WS-shaped MTOM (binary and base64 parts, a URL-encoded cid) and Axis-shaped attachments', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x2d, 0x2d]);
    const envelope =
      `<SOAP-ENV:Envelope xmlns:SOAP-ENV="${SOAP11}"><SOAP-ENV:Body><ns2:ImageResponse xmlns:ns2="urn:img">` +
      `<ns2:name>logo</ns2:name><ns2:image><xop:Include xmlns:xop="${XOP}" href="cid:logo%40example.org"/></ns2:image>` +
      `<ns2:thumb><xop:Include xmlns:xop="${XOP}" href="cid:thumb@example.org"></xop:Include></ns2:thumb>` +
      '</ns2:ImageResponse></SOAP-ENV:Body></SOAP-ENV:Envelope>';
    next = {
      contentType:
        'multipart/related; type="application/xop+xml"; boundary="----=_Part_0_1"; start="<root@example.org>"; start-info="text/xml"',
      body: Buffer.concat([
        Buffer.from('preamble\r\n------=_Part_0_1\r\nContent-Type: application/xop+xml; charset=utf-8; type="text/xml"\r\n'),
        Buffer.from(`Content-Transfer-Encoding: binary\r\nContent-ID: <root@example.org>\r\n\r\n${envelope}\r\n`),
        Buffer.from('------=_Part_0_1\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: binary\r\n'),
        Buffer.from('Content-ID: <logo@example.org>\r\n\r\n'),
        png,
        Buffer.from('\r\n------=_Part_0_1\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n'),
        Buffer.from(`Content-ID: <thumb@example.org>\r\n\r\n${png.subarray(0, 4).toString('base64')}\r\n------=_Part_0_1--\r\n`),
      ]),
    };
    assert.deepEqual(ok(await execute('packaged', { operation: 'send', method: 'Image' })), {
      name: 'logo',
      image: png.toString('base64'),
      thumb: png.subarray(0, 4).toString('base64'),
    });

    // SOAP with Attachments, as Axis 1 sends it: the envelope refers to a part by href; the parts stay attachments.
    const swa = `<soapenv:Envelope xmlns:soapenv="${SOAP11}"><soapenv:Body><ns1:fetchResponse xmlns:ns1="urn:swa"><fetchReturn href="cid:A1B2"/></ns1:fetchResponse></soapenv:Body></soapenv:Envelope>`;
    next = {
      contentType: 'multipart/related; type="text/xml"; start="<0F1E>"; \tboundary="----=_Part_7"',
      body: Buffer.from(
        `------=_Part_7\r\nContent-Type: text/xml; charset=UTF-8\r\nContent-Id: <0F1E>\r\n\r\n${swa}\r\n` +
          '------=_Part_7\r\nContent-Type: text/plain\r\nContent-Id: <A1B2>\r\n\r\nhello, attachment\r\n------=_Part_7--',
      ),
    };
    assert.deepEqual(ok(await execute('packaged', { operation: 'send', method: 'fetch' })), {
      fetchReturn: { $attributes: { href: 'cid:A1B2' } },
      $attachments: [
        { content_id: 'A1B2', content_type: 'text/plain', size: 17, base64: Buffer.from('hello, attachment').toString('base64') },
      ],
    });
  });

  test('a package that cannot be read is 502 upstream_invalid_response, saying why', async () => {
    const root = `Content-Type: text/xml\r\nContent-ID: <r>\r\n\r\n<s:Envelope xmlns:s="${SOAP11}"><s:Body><x/></s:Body></s:Envelope>\r\n`;
    const include = `<s:Envelope xmlns:s="${SOAP11}"><s:Body><x><xop:Include xmlns:xop="${XOP}" href="cid:gone"/></x></s:Body></s:Envelope>`;
    const cases: Array<[string, string, string, RegExp]> = [
      ['no boundary', 'multipart/related; type="text/xml"', `--b\r\n${root}--b--`, /no boundary/],
      ['no root', 'multipart/related; boundary=b; start="<elsewhere>"', `--b\r\n${root}--b--`, /no root part <elsewhere>/],
      ['never closed', 'multipart/related; boundary=b', `--b\r\n${root}`, /closing boundary is missing/],
      ['a missing part', 'multipart/related; boundary=b', `--b\r\nContent-Type: text/xml\r\n\r\n${include}\r\n--b--`, /cid:gone/],
      [
        'quoted-printable',
        'multipart/related; boundary=b',
        `--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nx\r\n--b--`,
        /quoted-printable/,
      ],
      [
        'too many parts',
        'multipart/related; boundary=b',
        `${`--b\r\n${root}`.repeat(maxMimeParts + 1)}--b--`,
        /more than 1000 parts/,
      ],
    ];
    for (const [name, contentType, body, reason] of cases) {
      next = { contentType, body: Buffer.from(body) };
      const error = assertError(await execute('packaged', { operation: 'send', method: 'x' }), 502, 'upstream_invalid_response');
      assert.match(error.message, reason, name);
    }
  });
});
