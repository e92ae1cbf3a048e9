import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import {
  buildEnvelope,
  envelopeIssues,
  quotedSoapAction,
  requestHeaders,
  soapActionProblem,
} from '../../src/connectors/soap/envelope.ts';
import { parseSoapFault } from '../../src/connectors/soap/fault.ts';
import { isWsdlUrl, soapActionFor } from '../../src/connectors/soap/mode.ts';
import { readSoapResponse } from '../../src/connectors/soap/response.ts';
import { elementValue, escapeXml, hasXmlIllegalCharacter, parseXml } from '../../src/connectors/soap/xml.ts';
import type { ValidationIssue } from '../../src/core/errors.ts';
import { apiError } from '../support/assertions.ts';

const soap11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const soap12 = 'http://www.w3.org/2003/05/soap-envelope';
const xsi = 'http://www.w3.org/2001/XMLSchema-instance';
const declaration = '<?xml version="1.0" encoding="utf-8"?>';

/** A SOAP 1.1 envelope around `body`, as a response buffer. */
const envelope11 = (body: string) =>
  Buffer.from(`<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="${soap11}"><s:Body>${body}</s:Body></s:Envelope>`);
const envelope12 = (body: string) =>
  Buffer.from(`<env:Envelope xmlns:env="${soap12}"><env:Header/><env:Body>${body}</env:Body></env:Envelope>`);

const xxe = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>';

/** The classic billion laughs with `levels` entity levels of ten references each (10^(levels-1) × "lol"). */
function billionLaughs(levels: number): string {
  let entities = '<!ENTITY lol0 "lol">';
  for (let level = 1; level < levels; level++) {
    entities += `<!ENTITY lol${level} "${`&lol${level - 1};`.repeat(10)}">`;
  }
  return `<?xml version="1.0"?><!DOCTYPE lolz [${entities}]><lolz>&lol${levels - 1};</lolz>`;
}

describe('isWsdlUrl: the mode rule', () => {
  test('a wsdl or singleWsdl query key in any case, or a path ending .wsdl, is WSDL mode', () => {
    for (const url of [
      'https://h/calc.asmx?wsdl',
      'https://h/calc.asmx?WSDL',
      'https://h/Service.svc?singleWsdl',
      'https://h/Service.svc?SINGLEWSDL',
      'https://h/calc.asmx?wsdl=1',
      'https://h/calc.asmx?wsdl=',
      'https://h/calc?foo=1&wsdl',
      'https://h/calc?foo=1&WsDl&bar=2',
      'https://h/service.wsdl',
      'https://h/a/Service.WSDL',
      'https://h/a/service.wsdl?x=1',
      'http://127.0.0.1:8080/calc.Wsdl#frag',
    ]) {
      assert.equal(isWsdlUrl(url), true, url);
    }
  });

  test('anything else is raw mode', () => {
    for (const url of [
      'https://h/calc.asmx',
      'https://h/calc.asmx?wsdlx',
      'https://h/calc.asmx?xwsdl',
      'https://h/calc.asmx?x=wsdl',
      'https://h/calc.asmx?xsd=1',
      'https://h/calc.asmx#wsdl',
      'https://h/wsdl',
      'https://h/wsdl/calc',
      'https://h/service.wsdl/',
      'https://h/service.wsdl.bak',
      'https://h/servicewsdl',
      'https://wsdl.example.com/',
      'not a url',
      '',
    ]) {
      assert.equal(isWsdlUrl(url), false, url);
    }
  });
});

describe('soapActionFor: the SOAP action rule', () => {
  test('the request soap_action wins, an empty one included', () => {
    assert.equal(soapActionFor({ soapAction: 'urn:custom', namespace: 'urn:calc', method: 'Add' }), 'urn:custom');
    assert.equal(soapActionFor({ soapAction: '', namespace: 'urn:calc', method: 'Add' }), '');
  });

  test('otherwise namespace/method with one slash', () => {
    assert.equal(soapActionFor({ namespace: 'http://example.com/raw', method: 'Add' }), 'http://example.com/raw/Add');
    assert.equal(soapActionFor({ namespace: 'http://tempuri.org/', method: 'Add' }), 'http://tempuri.org/Add');
    assert.equal(soapActionFor({ namespace: 'urn:calc', method: 'Add' }), 'urn:calc/Add');
  });

  test('without a namespace (absent or empty), the method alone', () => {
    assert.equal(soapActionFor({ method: 'Add' }), 'Add');
    assert.equal(soapActionFor({ namespace: '', method: 'Add' }), 'Add');
  });
});

describe('buildEnvelope: the raw-mode request', () => {
  test('SOAP 1.1: envelope namespace, method element in the namespace as default namespace', () => {
    const xml = buildEnvelope({ version: '1.1', namespace: 'http://example.com/raw', method: 'Add', params: { a: 2, b: 3 } });
    assert.equal(
      xml,
      `${declaration}<soap:Envelope xmlns:soap="${soap11}" xmlns:xsi="${xsi}"><soap:Body>` +
        '<Add xmlns="http://example.com/raw"><a>2</a><b>3</b></Add></soap:Body></soap:Envelope>',
    );
  });

  test('SOAP 1.2: the 2003 envelope namespace, same body', () => {
    const xml = buildEnvelope({ version: '1.2', namespace: 'urn:calc', method: 'Add', params: { a: '2' } });
    assert.equal(
      xml,
      `${declaration}<soap:Envelope xmlns:soap="${soap12}" xmlns:xsi="${xsi}"><soap:Body>` +
        '<Add xmlns="urn:calc"><a>2</a></Add></soap:Body></soap:Envelope>',
    );
  });

  test('no namespace leaves the method unqualified; no params is an empty method element', () => {
    assert.equal(
      buildEnvelope({ version: '1.1', method: 'Ping' }),
      `${declaration}<soap:Envelope xmlns:soap="${soap11}" xmlns:xsi="${xsi}"><soap:Body><Ping/></soap:Body></soap:Envelope>`,
    );
    assert.match(
      buildEnvelope({ version: '1.1', namespace: '', method: 'Ping', params: {} }),
      /<soap:Body><Ping\/><\/soap:Body>/,
    );
  });

  test('nested objects, arrays as repeated elements, scalars as text, null as xsi:nil, undefined left out', () => {
    const xml = buildEnvelope({
      version: '1.1',
      namespace: 'urn:orders',
      method: 'PlaceOrder',
      params: {
        order: { id: 7, express: false, items: [{ sku: 'A' }, { sku: 'B' }], note: null, gift: undefined, empty: {} },
        tags: ['x', 'y'],
        none: [],
        blank: '',
      },
    });
    assert.equal(
      xml,
      `${declaration}<soap:Envelope xmlns:soap="${soap11}" xmlns:xsi="${xsi}"><soap:Body>` +
        '<PlaceOrder xmlns="urn:orders"><order><id>7</id><express>false</express>' +
        '<items><sku>A</sku></items><items><sku>B</sku></items><note xsi:nil="true"/><empty/></order>' +
        '<tags>x</tags><tags>y</tags><blank/></PlaceOrder></soap:Body></soap:Envelope>',
    );
  });

  test('$attributes become attributes, $value the text (before child elements), also on the method element', () => {
    const xml = buildEnvelope({
      version: '1.1',
      namespace: 'urn:p',
      method: 'SetPrice',
      params: {
        $attributes: { version: 2 },
        price: { $attributes: { currency: 'EUR', rounded: true, skipped: null }, $value: 9.5 },
        item: [
          { $attributes: { id: '1' }, $value: 'first' },
          { $attributes: { id: '2' }, name: 'second' },
        ],
        mixed: { $value: 'text', child: 'c' },
        unqualified: { $attributes: { xmlns: '' }, $value: 'u' },
      },
    });
    assert.match(
      xml,
      new RegExp(
        '<SetPrice xmlns="urn:p" version="2"><price currency="EUR" rounded="true">9.5</price>' +
          '<item id="1">first</item><item id="2"><name>second</name></item>' +
          '<mixed>text<child>c</child></mixed><unqualified xmlns="">u</unqualified></SetPrice>',
      ),
    );
  });

  test('text and attribute values are escaped: <script>&"\' and whitespace in attributes', () => {
    const xml = buildEnvelope({
      version: '1.1',
      method: 'Echo',
      params: { text: `<script>&"'`, tag: { $attributes: { title: `a"b'<&>\tc\nd` }, $value: 'x]]>y' } },
    });
    assert.match(xml, /<text>&lt;script&gt;&amp;&quot;&apos;<\/text>/);
    assert.match(xml, /<tag title="a&quot;b&apos;&lt;&amp;&gt;&#9;c&#10;d">x\]\]&gt;y<\/tag>/);
    // Round trip: what we send parses back to what was given.
    const parsed = parseXml(xml) as { Envelope: { Body: { Echo: { text: string; tag: Record<string, string> } } } };
    assert.equal(parsed.Envelope.Body.Echo.text, `<script>&"'`);
    assert.equal(parsed.Envelope.Body.Echo.tag['@_title'], `a"b'<&>\tc\nd`);
    assert.equal(parsed.Envelope.Body.Echo.tag['#text'], 'x]]>y');
  });

  test('soap headers: <soap:Header> with one element per entry, only when some are given', () => {
    const xml = buildEnvelope({
      version: '1.2',
      namespace: 'urn:calc',
      method: 'Add',
      params: { a: 1 },
      soapHeaders: {
        Auth: { $attributes: { xmlns: 'urn:auth', 'soap:mustUnderstand': 'true' }, Token: 'secret&1' },
        Trace: 'abc',
      },
    });
    assert.equal(
      xml,
      `${declaration}<soap:Envelope xmlns:soap="${soap12}" xmlns:xsi="${xsi}"><soap:Header>` +
        '<Auth xmlns="urn:auth" soap:mustUnderstand="true"><Token>secret&amp;1</Token></Auth><Trace>abc</Trace>' +
        '</soap:Header><soap:Body><Add xmlns="urn:calc"><a>1</a></Add></soap:Body></soap:Envelope>',
    );
    assert.doesNotMatch(buildEnvelope({ version: '1.1', method: 'Add', soapHeaders: {} }), /Header/);
    assert.doesNotMatch(buildEnvelope({ version: '1.1', method: 'Add' }), /Header/);
  });

  test('prefixed names are allowed (QNames), so callers can send WS-Security style headers', () => {
    const xml = buildEnvelope({
      version: '1.1',
      method: 'Add',
      soapHeaders: { 'wsse:Security': { $attributes: { 'xmlns:wsse': 'urn:wsse' }, 'wsse:Username': 'u' } },
    });
    assert.match(xml, /<wsse:Security xmlns:wsse="urn:wsse"><wsse:Username>u<\/wsse:Username><\/wsse:Security>/);
  });

  test('a param key that is not an XML name is validation_failed (400) naming params.<key>', () => {
    for (const key of ['1st', 'has space', 'a<b', '$other', '', 'a:b:c', ':a', 'a:', 'x&y']) {
      const error = apiError(() => buildEnvelope({ version: '1.1', method: 'Add', params: { [key]: 1 } }), 'validation_failed');
      assert.equal(error.status, 400);
      assert.deepEqual(error.details?.issues, [{ path: `params.${key}`, message: 'is not a valid XML element name' }], key);
    }
  });

  test('Unicode letters, digits, dots, hyphens and underscores make valid names', () => {
    const xml = buildEnvelope({ version: '1.1', method: 'Größe', params: { _a: 1, 'b-c.d9': 2, 名前: 3 } });
    assert.match(xml, /<Größe><_a>1<\/_a><b-c\.d9>2<\/b-c\.d9><名前>3<\/名前><\/Größe>/);
  });

  test('every problem is listed, with paths into arrays, attributes, headers and the method', () => {
    const issues = envelopeIssues({
      version: '1.1',
      namespace: 'urn:x',
      method: 'bad method',
      params: {
        list: [{ 'x y': 1 }, [1]],
        el: { $attributes: { 'a b': 1, obj: {} }, $value: { not: 'text' } },
        ctrl: 'a\u0000b',
        lone: '\ud800',
        $attributes: { xmlns: 'urn:other' },
      },
      soapHeaders: { 'bad header': 'x', $attributes: {} },
    });
    const expected: ValidationIssue[] = [
      { path: 'method', message: 'is not a valid XML element name' },
      { path: 'params.$attributes.xmlns', message: 'the method element takes its xmlns from `namespace`' },
      { path: 'soap_headers.bad header', message: 'is not a valid XML element name' },
      { path: 'soap_headers.$attributes', message: 'is not a valid XML element name' },
      { path: 'params.list.0.x y', message: 'is not a valid XML element name' },
      { path: 'params.list.1', message: 'an array cannot directly hold another array' },
      { path: 'params.el.$attributes.a b', message: 'is not a valid XML attribute name' },
      { path: 'params.el.$attributes.obj', message: 'must be a string, number or boolean' },
      { path: 'params.el.$value', message: 'must be a string, number or boolean' },
      { path: 'params.ctrl', message: 'contains a character XML 1.0 cannot carry' },
      { path: 'params.lone', message: 'contains a character XML 1.0 cannot carry' },
    ];
    assert.deepEqual(issues, expected);
    const error = apiError(
      () => buildEnvelope({ version: '1.1', method: 'ok', params: { 'a b': 1, 'c d': 2 } }),
      'validation_failed',
    );
    assert.equal((error.details as { issues: ValidationIssue[] }).issues.length, 2);
  });

  test('property: checking alone finds exactly what building refuses, and building what checking allows', () => {
    // envelopeIssues walks the request without writing it (the check before anything runs); buildEnvelope writes it.
    const name = fc.oneof(
      fc.constantFrom('a', 'b:c', 'x y', '1a', '$value', '$attributes', 'é', ''),
      fc.string({ maxLength: 4 }),
    );
    const unit = fc.oneof(
      fc.constantFrom('a', '&', '<', '\u0000', '\ud800', '\uffff'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const scalar = fc.oneof(fc.string({ maxLength: 6, unit }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant({}));
    const value = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(name, tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    fc.assert(
      fc.property(
        name,
        fc.dictionary(name, value, { maxKeys: 4 }),
        fc.dictionary(name, value, { maxKeys: 2 }),
        (method, params, soapHeaders) => {
          const input = { version: '1.1' as const, namespace: 'urn:x', method, params, soapHeaders };
          const issues = envelopeIssues(input);
          let built: ValidationIssue[] = [];
          try {
            assert.match(buildEnvelope(input), /^<\?xml /);
          } catch (error) {
            built = (error as { details: { issues: ValidationIssue[] } }).details.issues;
          }
          assert.deepEqual(issues, built);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('$attributes must be an object', () => {
    assert.deepEqual(envelopeIssues({ version: '1.1', method: 'M', params: { e: { $attributes: 'x' } } }), [
      { path: 'params.e.$attributes', message: 'must be an object of attribute values' },
    ]);
  });

  test('without a namespace the caller may set the method element xmlns itself', () => {
    const xml = buildEnvelope({ version: '1.1', method: 'M', params: { $attributes: { xmlns: 'urn:own' } } });
    assert.match(xml, /<M xmlns="urn:own"\/>/);
  });
});

describe('requestHeaders: per SOAP version', () => {
  test('1.1: text/xml and a quoted SOAPAction; MTOM and attachments accepted', () => {
    assert.deepEqual(requestHeaders({ version: '1.1', soapAction: 'http://example.com/raw/Add' }), {
      'content-type': 'text/xml; charset=utf-8',
      soapaction: '"http://example.com/raw/Add"',
      accept: 'text/xml, multipart/related, application/xop+xml',
    });
    assert.deepEqual(requestHeaders({ version: '1.1', soapAction: '' }), {
      'content-type': 'text/xml; charset=utf-8',
      soapaction: '""',
      accept: 'text/xml, multipart/related, application/xop+xml',
    });
  });

  test('1.2: application/soap+xml with an action parameter, and no SOAPAction header', () => {
    assert.deepEqual(requestHeaders({ version: '1.2', soapAction: 'urn:calc/Add' }), {
      'content-type': 'application/soap+xml; charset=utf-8; action="urn:calc/Add"',
      accept: 'application/soap+xml, multipart/related, application/xop+xml',
    });
    assert.deepEqual(requestHeaders({ version: '1.2', soapAction: '' }), {
      'content-type': 'application/soap+xml; charset=utf-8; action=""',
      accept: 'application/soap+xml, multipart/related, application/xop+xml',
    });
  });

  test('the action as written: a space as is, " and \\ as quoted-pairs, in SOAP 1.1 and 1.2', () => {
    assert.equal(
      requestHeaders({ version: '1.1', soapAction: 'CUCM:DB ver=14.0 listPhone' }).soapaction,
      '"CUCM:DB ver=14.0 listPhone"',
    );
    assert.equal(requestHeaders({ version: '1.1', soapAction: 'urn:a "b" c\\d' }).soapaction, '"urn:a \\"b\\" c\\\\d"');
    assert.equal(
      requestHeaders({ version: '1.2', soapAction: 'a"; x="y \\' })['content-type'],
      'application/soap+xml; charset=utf-8; action="a\\"; x=\\"y \\\\"',
    );
    // HTAB may stand in a quoted-string (RFC 9110 §5.6.4); a % stays as written.
    assert.equal(quotedSoapAction('a\tb%20c'), '"a\tb%20c"');
  });

  test('beyond ASCII: the UTF-8 bytes percent-encoded, U+0080–U+00FF included', () => {
    assert.equal(quotedSoapAction('urn:ü/€/😀/\u0085'), '"urn:%C3%BC/%E2%82%AC/%F0%9F%98%80/%C2%85"');
  });

  test('CR, LF, the other controls and DEL are refused, never sent', () => {
    for (const [action, code] of [
      ['urn:a\r\nX-Evil: 1', 'U+000D'],
      ['urn:a\nb', 'U+000A'],
      ['\u0000', 'U+0000'],
      ['a\u001fb', 'U+001F'],
      ['a\u007fb', 'U+007F'],
    ]) {
      assert.equal(soapActionProblem(action), `holds ${code}, a control character no HTTP header can carry`);
      assert.throws(() => requestHeaders({ version: '1.1', soapAction: action }), /reached the transport/);
      assert.throws(() => requestHeaders({ version: '1.2', soapAction: action }), /reached the transport/);
    }
    assert.equal(soapActionProblem('a\ud800b'), 'holds U+D800, an unpaired surrogate (no character)');
    for (const action of ['', 'CUCM:DB ver=14.0 listPhone', 'a\tb', 'a"\\b', 'ü\u0085😀']) {
      assert.equal(soapActionProblem(action), undefined, action);
    }
  });
});

describe('parseXml: one safe parser configuration', () => {
  test('prefixes and xmlns declarations removed, attributes under @_, values stay trimmed strings, repeats as arrays', () => {
    const parsed = parseXml(
      '<?xml version="1.0"?>\n<m:R xmlns:m="urn:x" m:id=" 7 "><m:n>  0012 </m:n><m:b>true</m:b><m:f>1.50</m:f>' +
        '<m:i>1</m:i><m:i>2</m:i><m:e/></m:R>',
    );
    assert.deepEqual(parsed, { R: { '@_id': '7', n: '0012', b: 'true', f: '1.50', i: ['1', '2'], e: '' } });
  });

  test('predefined entities and character references are decoded once; others stay as written', () => {
    const parsed = parseXml('<a t="&quot;&amp;lt;&#65;">&lt;b&gt; &amp;amp; &apos;&#x1F600;&#233; &foo; &#0; &#xD800;</a>');
    assert.deepEqual(parsed, { a: { '#text': `<b> &amp; '😀é &foo; &#0; &#xD800;`, '@_t': '"&lt;A' } });
  });

  test('CDATA is literal text: no entity decoding, no markup', () => {
    assert.deepEqual(parseXml('<a><![CDATA[ &amp; <b>x</b> ]]></a>'), { a: '&amp; <b>x</b>' });
    assert.deepEqual(parseXml('<a><![CDATA[<!DOCTYPE html>]]></a>'), { a: '<!DOCTYPE html>' });
  });

  test('a DOCTYPE or declaration inside a comment or CDATA is only text', () => {
    assert.deepEqual(parseXml('<!-- <!DOCTYPE x> --><a>1<!-- <!ENTITY e "x"> --></a>'), { a: '1' });
  });

  test('XXE: a DTD with an external entity is refused before parsing, and nothing is read', () => {
    const error = apiError(() => parseXml(xxe), 'upstream_invalid_response');
    assert.equal(error.status, 502);
    assert.equal(error.message, 'The upstream answer declares a DTD, which is refused.');
    assert.equal(error.details, undefined);
    assert.doesNotMatch(JSON.stringify({ message: error.message, details: error.details }), /root:/);
  });

  test('any DOCTYPE or markup declaration, in any case and place, is refused', () => {
    for (const xml of [
      '<!DOCTYPE a><a/>',
      '<!doctype a><a/>',
      '  \n<?xml version="1.0"?>\n<!-- hi -->\n<!DocType a SYSTEM "http://evil/x.dtd"><a/>',
      '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
      '<!ENTITY e "x"><a/>',
      '<a><!DOCTYPE b></a>',
      '<a><![INCLUDE[ x ]]></a>',
      '\ufeff<!DOCTYPE a><a/>',
    ]) {
      const error = apiError(() => parseXml(xml), 'upstream_invalid_response');
      assert.match(error.message, /declares a DTD/, xml);
    }
  });

  test('billion laughs is refused without expansion: the heap barely grows', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const laughs = billionLaughs(10);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100; i++) apiError(() => parseXml(laughs), 'upstream_invalid_response');
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    assert.ok(grown < 2 * 1024 * 1024, `heap grew by ${grown} bytes`);
  });

  test('malformed or non-XML text is upstream_invalid_response, never a crash', () => {
    const deep = `${'<a>'.repeat(257)}${'</a>'.repeat(257)}`;
    for (const text of [
      '',
      '   ',
      'not xml',
      '{"json": true}',
      '<a>',
      '<a><b></a></b>',
      '<a/><b/>',
      '<a/><a/>',
      '<a>x</a>trailing',
      '<a b>x</a>',
      '<a>x & y</a>',
      '<1a/>',
      '<a><!-- open',
      '<a><![CDATA[ open</a>',
      '<__proto__>x</__proto__>',
      '<a><constructor>x</constructor></a>',
      deep,
    ]) {
      const error = apiError(() => parseXml(text), 'upstream_invalid_response');
      assert.equal(error.status, 502, text);
    }
  });

  test('a UTF-8 byte-order mark is ignored', () => {
    assert.deepEqual(parseXml('\ufeff<a>1</a>'), { a: '1' });
  });

  test('element names that shadow Object methods are kept as they are', () => {
    assert.deepEqual(parseXml('<a><toString>1</toString><hasOwnProperty>2</hasOwnProperty></a>'), {
      a: { toString: '1', hasOwnProperty: '2' },
    });
  });
});

describe('escapeXml and the XML character rules', () => {
  test('property: the same text as replacing the characters XML cannot carry, then escaping the five and three', () => {
    // The definition, written plainly; escapeXml only skips a replacement that would change nothing.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids are the point.
    const illegal = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ud800-\udfff\ufffe\uffff]/gu;
    const named: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
    const plainly = (text: string) =>
      text.replace(illegal, '\ufffd').replace(/[&<>"'\t\n\r]/g, (c) => named[c] ?? `&#${c.charCodeAt(0)};`);
    const text = fc.string({
      unit: fc.oneof(fc.constantFrom(...'&<>"\'\t\n\r a\u0000\ufffe'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    });
    fc.assert(
      fc.property(text, (t) => assert.equal(escapeXml(t), plainly(t))),
      { numRuns: 1000 },
    );
  });

  test('escapes markup, both quotes and whitespace that parsers would normalise', () => {
    assert.equal(escapeXml(`<script>&"'`), '&lt;script&gt;&amp;&quot;&apos;');
    assert.equal(escapeXml('a\tb\nc\rd'), 'a&#9;b&#10;c&#13;d');
    assert.equal(escapeXml('plain text é 😀'), 'plain text é 😀');
  });

  test('characters XML 1.0 cannot carry become U+FFFD, so the output is always well-formed', () => {
    assert.equal(escapeXml('a\u0000b\u001fc\ud800d\uffff'), 'a\ufffdb\ufffdc\ufffdd\ufffd');
    assert.equal(hasXmlIllegalCharacter('a\u0001'), true);
    assert.equal(hasXmlIllegalCharacter('\udc00'), true);
    assert.equal(hasXmlIllegalCharacter('😀\t\n\r'), false);
  });
});

describe('elementValue: parsed elements as API output', () => {
  test('attributes under $attributes, text under $value, xsi:nil as null', () => {
    assert.equal(elementValue('5'), '5');
    assert.equal(elementValue(''), '');
    assert.deepEqual(elementValue({ '#text': '5', '@_unit': 'cm' }), { $attributes: { unit: 'cm' }, $value: '5' });
    assert.deepEqual(elementValue({ '@_id': '1', x: ['a', 'b'] }), { $attributes: { id: '1' }, x: ['a', 'b'] });
    assert.equal(elementValue({ '@_nil': 'true' }), null);
    assert.deepEqual(elementValue({ '@_nil': 'true', '#text': 'x' }), { $attributes: { nil: 'true' }, $value: 'x' });
  });

  test('an attribute named __proto__ is an own property, not a prototype', () => {
    const parsed = parseXml('<a __proto__="x" b="1"/>') as { a: unknown };
    const value = elementValue(parsed.a) as { $attributes: Record<string, string> };
    assert.equal(Object.getPrototypeOf(value.$attributes), Object.prototype);
    assert.equal(Object.hasOwn(value.$attributes, '__proto__'), true);
  });
});

describe('parseSoapFault: 1.1 and 1.2 normalised', () => {
  test('SOAP 1.1: faultcode, faultstring, detail', () => {
    const document = parseXml(
      envelope11(
        '<s:Fault><faultcode>s:Client</faultcode><faultstring xml:lang="en">Invalid amount</faultstring>' +
          '<faultactor>urn:a</faultactor><detail><e:Err xmlns:e="urn:e"><e:Code>42</e:Code><e:Field>a</e:Field>' +
          '<e:Field>b</e:Field></e:Err></detail></s:Fault>',
      ).toString(),
    );
    assert.deepEqual(parseSoapFault(document), {
      fault_code: 's:Client',
      fault_string: 'Invalid amount',
      detail: { Err: { Code: '42', Field: ['a', 'b'] } },
    });
  });

  test('SOAP 1.2: Code/Value with the Subcode chain, the English Reason/Text, Detail', () => {
    const document = parseXml(
      envelope12(
        '<env:Fault><env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value>m:Invalid</env:Value>' +
          '<env:Subcode><env:Value>m:TooLarge</env:Value></env:Subcode></env:Subcode></env:Code>' +
          '<env:Reason><env:Text xml:lang="fr">Montant invalide</env:Text><env:Text xml:lang="en-US">Invalid amount</env:Text>' +
          '</env:Reason><env:Detail><m:Limit xmlns:m="urn:m" unit="EUR">100</m:Limit></env:Detail></env:Fault>',
      ).toString(),
    );
    assert.deepEqual(parseSoapFault(document), {
      fault_code: 'env:Sender/m:Invalid/m:TooLarge',
      fault_string: 'Invalid amount',
      detail: { Limit: { $attributes: { unit: 'EUR' }, $value: '100' } },
    });
  });

  test('SOAP 1.2 without subcodes, English text or detail: the code alone, the first text, null', () => {
    const document = parseXml(
      envelope12(
        '<env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code>' +
          '<env:Reason><env:Text xml:lang="de">Fehler</env:Text><env:Text xml:lang="fr">Erreur</env:Text></env:Reason></env:Fault>',
      ).toString(),
    );
    assert.deepEqual(parseSoapFault(document), { fault_code: 'env:Receiver', fault_string: 'Fehler', detail: null });
  });

  test('missing parts are empty strings and null; an empty or text detail is kept as such', () => {
    assert.deepEqual(parseSoapFault(parseXml(envelope11('<s:Fault/>').toString())), {
      fault_code: '',
      fault_string: '',
      detail: null,
    });
    const textDetail = parseXml(envelope11('<s:Fault><faultcode>s:Server</faultcode><detail>boom</detail></s:Fault>').toString());
    assert.deepEqual(parseSoapFault(textDetail), { fault_code: 's:Server', fault_string: '', detail: 'boom' });
    const emptyDetail = parseXml(envelope11('<s:Fault><faultstring>x</faultstring><detail/></s:Fault>').toString());
    assert.equal(parseSoapFault(emptyDetail)?.detail, null);
  });

  test('SOAP 1.2 written loosely: a bare-text Code and Reason still name the fault', () => {
    const document = parseXml(
      envelope12('<env:Fault><env:Code>Sender</env:Code><env:Reason>Bad</env:Reason></env:Fault>').toString(),
    );
    assert.deepEqual(parseSoapFault(document), { fault_code: 'Sender', fault_string: 'Bad', detail: null });
  });

  test('no Fault in the Body, or no envelope: undefined', () => {
    assert.equal(parseSoapFault(parseXml(envelope11('<AddResponse/>').toString())), undefined);
    assert.equal(parseSoapFault(parseXml('<Fault><faultcode>x</faultcode></Fault>')), undefined);
    assert.equal(parseSoapFault(undefined), undefined);
  });
});

describe('readSoapResponse: the raw-mode answer', () => {
  test('the Body first child as an object of its children, values as strings', () => {
    const body = envelope11('<AddResponse xmlns="http://example.com/raw"><AddResult>5</AddResult></AddResponse>');
    assert.deepEqual(readSoapResponse(200, { 'content-type': 'text/xml' }, body), { AddResult: '5' });
  });

  test('nested objects, repeated elements as arrays, numbers and booleans staying strings, attributes kept', () => {
    const body = envelope12(
      '<m:GetOrderResponse xmlns:m="urn:o"><m:Order m:id="7"><m:Total currency="EUR">0012.50</m:Total>' +
        '<m:Paid>false</m:Paid><m:Line><m:Sku>A</m:Sku><m:Qty>1</m:Qty></m:Line><m:Line><m:Sku>B</m:Sku><m:Qty>02</m:Qty></m:Line>' +
        '<m:Note xsi:nil="true" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"/><m:Empty/></m:Order>' +
        '<m:Tag>x</m:Tag><m:Tag>y</m:Tag></m:GetOrderResponse>',
    );
    assert.deepEqual(readSoapResponse(200, {}, body), {
      Order: {
        $attributes: { id: '7' },
        Total: { $attributes: { currency: 'EUR' }, $value: '0012.50' },
        Paid: 'false',
        Line: [
          { Sku: 'A', Qty: '1' },
          { Sku: 'B', Qty: '02' },
        ],
        Note: null,
        Empty: '',
      },
      Tag: ['x', 'y'],
    });
  });

  test('an empty response element, an empty Body and an empty 2xx body (one-way) are {}', () => {
    assert.deepEqual(readSoapResponse(200, {}, envelope11('<AddResponse xmlns="urn:x"/>')), {});
    assert.deepEqual(readSoapResponse(200, {}, envelope11('')), {});
    assert.deepEqual(readSoapResponse(202, {}, Buffer.alloc(0)), {});
    assert.deepEqual(readSoapResponse(200, {}, Buffer.from(' \r\n')), {});
  });

  test('a text-only response element is {$value}; entities and CDATA decoded', () => {
    assert.deepEqual(readSoapResponse(200, {}, envelope11('<EchoResponse>a &amp; b</EchoResponse>')), { $value: 'a & b' });
    assert.deepEqual(readSoapResponse(200, {}, envelope11('<R><x><![CDATA[<b>&amp;</b>]]></x></R>')), { x: '<b>&amp;</b>' });
  });

  test('UTF-8 and UTF-16 byte-order marks are honoured', () => {
    const xml = envelope11('<R><x>é</x></R>').toString();
    assert.deepEqual(readSoapResponse(200, {}, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(xml)])), { x: 'é' });
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]);
    assert.deepEqual(readSoapResponse(200, {}, le), { x: 'é' });
    const be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(xml, 'utf16le').swap16()]);
    assert.deepEqual(readSoapResponse(200, {}, be), { x: 'é' });
  });

  test('a SOAP 1.1 fault on HTTP 500 is soap_fault (502) with normalised details, message = the fault string', () => {
    const body = envelope11(
      '<s:Fault><faultcode>s:Server</faultcode><faultstring>Division by zero</faultstring>' +
        '<detail><Info>b was 0</Info></detail></s:Fault>',
    );
    const error = apiError(() => readSoapResponse(500, {}, body), 'soap_fault');
    assert.equal(error.status, 502);
    assert.equal(error.message, 'Division by zero');
    assert.deepEqual(error.details, { fault_code: 's:Server', fault_string: 'Division by zero', detail: { Info: 'b was 0' } });
  });

  test('a fault on HTTP 200 (and 400), SOAP 1.2, is soap_fault too', () => {
    const body = envelope12(
      '<env:Fault><env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value>m:Bad</env:Value></env:Subcode></env:Code>' +
        '<env:Reason><env:Text xml:lang="en">Bad input</env:Text></env:Reason></env:Fault>',
    );
    for (const status of [200, 400, 500]) {
      const error = apiError(() => readSoapResponse(status, {}, body), 'soap_fault');
      assert.equal(error.message, 'Bad input');
      assert.deepEqual(error.details, { fault_code: 'env:Sender/m:Bad', fault_string: 'Bad input', detail: null });
    }
  });

  test('a fault without a fault string gets the catalogue message', () => {
    const error = apiError(
      () => readSoapResponse(500, {}, envelope11('<s:Fault><faultcode>s:Server</faultcode></s:Fault>')),
      'soap_fault',
    );
    assert.equal(error.message, 'The upstream SOAP service answered with a fault.');
  });

  test('non-2xx without a fault is upstream_http_error with the status and a body excerpt ≤ 1 KiB', () => {
    for (const [status, body] of [
      [500, Buffer.alloc(0)],
      [503, Buffer.from('Service Unavailable')],
      [502, Buffer.from('<html><body><h1>502 Bad Gateway</h1></body></html>')],
      [500, Buffer.from('<!DOCTYPE html><html><head><title>Error</title></head><body>x</body></html>')],
      [404, Buffer.from('<error>not found</error>')],
      [500, envelope11('<AddResponse><AddResult>5</AddResult></AddResponse>')],
      [500, Buffer.from(xxe)],
      [500, Buffer.from('<a><b></a>')],
    ] as const) {
      const error = apiError(() => readSoapResponse(status, {}, body), 'upstream_http_error');
      assert.equal(error.status, 502);
      assert.deepEqual(error.details, { upstream_status: status, body_excerpt: body.toString() });
    }
    const long = Buffer.from(`<html>${'x'.repeat(5000)}</html>`);
    const error = apiError(() => readSoapResponse(500, {}, long), 'upstream_http_error');
    assert.equal(Buffer.byteLength(error.details?.body_excerpt as string), 1024);
  });

  test('an HTML page on a 2xx is upstream_invalid_response, whether or not it has a DOCTYPE', () => {
    for (const html of [
      '<!DOCTYPE html><html><body>Login</body></html>',
      '\n  <!-- proxy --><HTML lang="en"><body>Login</body></HTML>',
      '<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x"><html/>',
    ]) {
      const error = apiError(
        () => readSoapResponse(200, { 'Content-Type': 'text/html' }, Buffer.from(html)),
        'upstream_invalid_response',
      );
      assert.match(error.message, /HTML page/);
      assert.deepEqual(error.details, { upstream_status: 200, content_type: 'text/html', body_excerpt: html });
    }
  });

  test('XML that is not an Envelope with a Body, on a 2xx, is upstream_invalid_response', () => {
    for (const xml of [
      '<AddResponse><AddResult>5</AddResult></AddResponse>',
      `<s:Envelope xmlns:s="${soap11}"><s:Header/></s:Envelope>`,
      `<s:Envelope xmlns:s="${soap11}">text</s:Envelope>`,
      '<Body><R/></Body>',
    ]) {
      const error = apiError(() => readSoapResponse(200, {}, Buffer.from(xml)), 'upstream_invalid_response');
      assert.match(error.message, /not a SOAP envelope with a Body/, xml);
      assert.equal(error.details?.upstream_status, 200);
    }
  });

  test('malformed XML and non-XML text on a 2xx are upstream_invalid_response with details', () => {
    for (const text of ['<s:Envelope><s:Body>', '{"ok":true}', 'OK']) {
      const error = apiError(
        () => readSoapResponse(200, { 'content-type': 'text/xml' }, Buffer.from(text)),
        'upstream_invalid_response',
      );
      assert.deepEqual(error.details, { upstream_status: 200, content_type: 'text/xml', body_excerpt: text });
    }
  });

  test('XXE and billion laughs in a 200 answer: refused unexpanded, no file contents in the error', () => {
    for (const text of [
      xxe,
      billionLaughs(10),
      `<!DOCTYPE s:Envelope [<!ENTITY e SYSTEM "file:///etc/passwd">]><s:Envelope xmlns:s="${soap11}"><s:Body><R>&e;</R></s:Body></s:Envelope>`,
    ]) {
      const error = apiError(() => readSoapResponse(200, {}, Buffer.from(text)), 'upstream_invalid_response');
      assert.equal(error.message, 'The upstream answer declares a DTD, which is refused.');
      assert.doesNotMatch(JSON.stringify({ message: error.message, details: error.details }), /root:|lollol/);
    }
  });
});
