import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk as ok } from '../support/assertions.ts';
import { phpClient, type WsdlFixture, wsdlFixture, zeepReplies, zeepSamples } from '../support/wsdl-corpus.ts';
import { compareXml } from '../support/xml-compare.ts';

/**
 * xs:list and xs:union types, a substitution group and a document-style output of two parts (issue 23), on a
 * fixture of ours (test/support/fixtures/soap/schema-kinds/kinds.wsdl), against two independent clients: python-zeep and PHP's
 * SoapClient (ext/soap). Where both fail a construct, the test says so and holds Interchange to the specification.
 */

const reply =
  '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>' +
  '<k:Summary xmlns:k="urn:kinds"><k:total>3</k:total><k:codes> 4 5\n6 </k:codes><k:when>never</k:when></k:Summary>' +
  '<k:Detail xmlns:k="urn:kinds"><k:circle><k:label>c</k:label><k:radius>1.5</k:radius></k:circle>' +
  '<k:square><k:label>s</k:label><k:side>2</k:side></k:square><k:shape><k:label>p</k:label></k:shape></k:Detail>' +
  '</s:Body></s:Envelope>';

describe('WSDL mode: lists, unions, substitution groups and outputs of several parts', () => {
  let fixture: WsdlFixture;
  let wsdl: string;
  const endpoint = () => fixture.endpoint;

  const tally = (params: Record<string, unknown>) =>
    fixture.h.call(fixture.auth, {
      method: 'POST',
      url: '/api/v1/integrations/kinds/execute',
      payload: { operation: 'send', method: 'Tally', params },
    });

  before(async () => {
    fixture = await wsdlFixture('schema-kinds', 'kinds.wsdl', 'kinds');
    wsdl = fixture.wsdl;
  });
  after(() => fixture?.close());

  test("a list's items and a union's value are sent as zeep and PHP's SoapClient send them", async () => {
    const built = (await zeepSamples([wsdl]))[wsdl];
    assert.ok(Array.isArray(built) && 'envelope' in built[0], JSON.stringify(built));
    endpoint().requests.length = 0;
    ok(await tally(built[0].params));
    assert.deepEqual(compareXml(endpoint().requests[0].body, built[0].envelope), []);

    // A list given as a JSON list; PHP's SoapClient writes the same call.
    const params = { codes: [1, 2, 3], when: 'never', shape: { label: 'x' } };
    const [php] = await phpClient([{ wsdl, operation: 'Tally', params, reply }]);
    assert.ok('request' in php, JSON.stringify(php));
    endpoint().requests.length = 0;
    ok(await tally(params));
    assert.deepEqual(compareXml(endpoint().requests[0].body, php.request), []);
    // The same list given as its text.
    endpoint().requests.length = 0;
    ok(await tally({ ...params, codes: '1 2 3' }));
    assert.deepEqual(compareXml(endpoint().requests[0].body, php.request), []);
  });

  test("list items, a list's length and a union's members are checked before sending", async () => {
    endpoint().requests.length = 0;
    const res = await tally({ codes: [1, 'x'], few: [1, 2, 3, 4], when: 'sometimes', shape: { label: 'x' } });
    assert.deepEqual(assertError(res, 400, 'invalid_soap_params').details?.issues, [
      { path: 'params.codes', message: 'item 1 must be an int (a whole number in its range)' },
      { path: 'params.few', message: 'must be at most 3 items long (maxLength)' },
      { path: 'params.when', message: 'must be a value of one of xs:date, xs:string' },
    ]);
    assert.equal(endpoint().requests.length, 0);
    ok(await tally({ codes: [], few: [1, 2, 3], when: '2024-02-29', shape: { label: 'x' } }));
  });

  test('a member of a substitution group stands in for its head (neither zeep nor PHP writes one: XML Schema 3.3.6)', async () => {
    endpoint().requests.length = 0;
    ok(await tally({ codes: [7], when: 'never', circle: { label: 'c', radius: 2 } }));
    const expected =
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><k:Tally xmlns:k="urn:kinds">' +
      '<k:codes>7</k:codes><k:when>never</k:when><k:circle><k:label>c</k:label><k:radius>2</k:radius></k:circle>' +
      '</k:Tally></s:Body></s:Envelope>';
    assert.deepEqual(compareXml(endpoint().requests[0].body, expected), []);
    // The head is required: one of its members will do, none is refused; a member's content is checked as its type.
    const missing = assertError(await tally({ codes: [7], when: 'never' }), 400, 'invalid_soap_params');
    assert.deepEqual(missing.details?.issues, [{ path: 'params.shape', message: 'is required (or one of circle, square)' }]);
    const wrong = assertError(
      await tally({ codes: [7], when: 'never', square: { label: 's', side: 'x' } }),
      400,
      'invalid_soap_params',
    );
    assert.deepEqual(wrong.details?.issues, [
      { path: 'params.square.side', message: 'must be an int (a whole number in its range)' },
    ]);
  });

  test('a union is typed as python-zeep types it: when all members read as numbers, a number; else text', async () => {
    const unions =
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>' +
      '<k:Summary xmlns:k="urn:kinds"><k:total>3</k:total><k:codes>4</k:codes><k:when>never</k:when>' +
      '<k:minutes>38</k:minutes><k:page>1</k:page></k:Summary><k:Detail xmlns:k="urn:kinds"/></s:Body></s:Envelope>';
    endpoint().envelope = unions;
    try {
      const data = ok(await tally({ codes: [1], when: 'never', shape: { label: 'x' } }));
      // Exchange's ReminderMinutesBeforeStart came back "38" here before.
      assert.equal(data.summary.minutes, 38);
      assert.equal(data.summary.page, '1');
      const [zeep] = await zeepReplies([{ wsdl, operation: 'Tally', reply: unions }]);
      assert.ok('value' in zeep, JSON.stringify(zeep));
      const summary = (zeep.value as { summary: Record<string, unknown> }).summary;
      assert.deepEqual([summary.minutes, summary.page], [data.summary.minutes, data.summary.page]);
    } finally {
      endpoint().envelope = undefined;
    }
  });

  test('an answer of two parts, a list, a union and substitutes reads as the specification and the two clients say', async () => {
    endpoint().envelope = reply;
    try {
      const data = ok(await tally({ codes: [1], when: 'never', shape: { label: 'x' } }));
      assert.deepEqual(data, {
        summary: { total: 3, codes: [4, 5, 6], when: 'never' },
        detail: {
          circle: [{ label: 'c', radius: 1.5 }],
          square: [{ label: 's', side: 2 }],
          shape: [{ label: 'p' }],
        },
      });
      const [zeep] = await zeepReplies([{ wsdl, operation: 'Tally', reply }]);
      const [php] = await phpClient([
        { wsdl, operation: 'Tally', params: { codes: [1], when: 'never', shape: { label: 'x' } }, reply },
      ]);
      assert.ok('value' in zeep && 'result' in php, JSON.stringify([zeep, php]));
      const zeepValue = zeep.value as { summary: Record<string, unknown>; detail: Record<string, unknown> };
      const phpValue = php.result as { summary: Record<string, unknown>; detail: Record<string, unknown> };
      // Both name the two parts by their part names, as Interchange does.
      assert.deepEqual(Object.keys(zeepValue), ['summary', 'detail']);
      assert.deepEqual(Object.keys(phpValue), ['summary', 'detail']);
      // The list: zeep reads its items typed, as Interchange does (PHP keeps the text).
      assert.deepEqual(zeepValue.summary.codes, data.summary.codes);
      assert.equal(phpValue.summary.codes, '4 5 6');
      // The union: PHP keeps the text, as Interchange does; zeep finds no member for "never" and reads null.
      assert.equal(phpValue.summary.when, data.summary.when);
      assert.equal(zeepValue.summary.when, null);
      // The substitutes: PHP keeps only the head's own element, zeep leaves them unread.
      assert.deepEqual(phpValue.detail, { shape: { label: 'p' } });
      assert.equal(zeepValue.detail.shape, null);
    } finally {
      endpoint().envelope = undefined;
    }
  });
});
