import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, assertOk as ok } from '../support/assertions.ts';
import { type WsdlFixture, wsdlFixture, type ZeepSample, zeepSamples } from '../support/wsdl-corpus.ts';
import { clark, compareXml, parseQualified } from '../support/xml-compare.ts';

/**
 * Schema rules the corpus has few samples of (issue 9, docs/execute.md#wsdl-mode), on a fixture of ours
 * (test/support/fixtures/soap/edges/edges.wsdl, importing common.xsd): attributes local, by `ref` to another namespace,
 * through nested attribute groups, inherited by extension and restriction, prohibited, on simple content, with
 * anyAttribute; qualified by attributeFormDefault or not. python-zeep builds the sample envelopes, as for the corpus.
 */

describe('WSDL mode on schema edges: attributes (issue 9)', () => {
  let fixture: WsdlFixture;
  let samples: Record<string, ZeepSample>;
  const endpoint = () => fixture.endpoint;

  const send = (method: string, params: Record<string, unknown>) =>
    fixture.h.call(fixture.auth, {
      method: 'POST',
      url: '/api/v1/integrations/edges/execute',
      payload: { operation: 'send', method, params },
    });

  before(async () => {
    fixture = await wsdlFixture('edges', 'edges.wsdl', 'edges');
    const built = (await zeepSamples([fixture.wsdl]))[fixture.wsdl];
    assert.ok(Array.isArray(built), JSON.stringify(built));
    samples = Object.fromEntries(
      built.map((sample) => {
        assert.ok('envelope' in sample, JSON.stringify(sample));
        return [sample.operation, sample];
      }),
    );
  });
  after(() => fixture?.close());

  test('an element with attributes only: the envelope zeep builds', async () => {
    endpoint().requests.length = 0;
    const sample = samples.GetItem;
    ok(await send('GetItem', sample.params));
    assert.deepEqual(compareXml(endpoint().requests[0].body, sample.envelope), []);
  });

  test('attributes qualified by attributeFormDefault, inherited, from nested groups, on simple content: zeep’s envelope', async () => {
    const sample = samples.PutItem;
    // zeep is wrong here: it reads `use` from the global declaration of a referenced attribute, where XML Schema
    // (3.2.2) puts it on the reference (`<xs:attribute ref="c:trace" use="required"/>`). Its sample leaves the
    // required trace out, and Interchange refuses that.
    assert.equal((sample.params.$attributes as Record<string, unknown> | undefined)?.trace, undefined);
    endpoint().requests.length = 0;
    const refused = assertError(await send('PutItem', sample.params), 400, 'invalid_soap_params');
    assert.deepEqual(refused.details?.issues, [{ path: 'params.$attributes.trace', message: 'is a required attribute' }]);
    assert.equal(endpoint().requests.length, 0);

    // With it, the envelope is zeep's with the attribute added: a global attribute is always qualified.
    ok(await send('PutItem', { ...sample.params, $attributes: { trace: 't-1' } }));
    const expected = sample.envelope.replace(/(<ns0:PutItem [^>]*)>/, '$1 xmlns:tc="urn:edges:common" tc:trace="t-1">');
    assert.notEqual(expected, sample.envelope);
    assert.deepEqual(compareXml(endpoint().requests[0].body, expected), []);
  });

  test('optional attributes: qualified in their namespace, form="unqualified" in none; anyAttribute takes others', async () => {
    const sample = samples.PutItem;
    const item = sample.params.item as Record<string, Record<string, unknown>>;
    const params = {
      ...sample.params,
      $attributes: { trace: 't' },
      item: { ...item, $attributes: { ...item.$attributes, revision: 2, origin: 'import', 'x:note': 'n', 'xmlns:x': 'urn:x' } },
    };
    endpoint().requests.length = 0;
    ok(await send('PutItem', params));
    const bodyElement = parseQualified(endpoint().requests[0].body).children.find((c) => c.local === 'Body');
    const sentItem = bodyElement?.children[0].children.find((c) => c.local === 'item');
    const common = (local: string) => clark('urn:edges:common', local);
    assert.deepEqual(sentItem?.attributes, {
      [common('version')]: '1',
      kind: 'BOOK',
      [common('by')]: 'sample',
      [common('at')]: '2024-01-02T03:04:05',
      [common('revision')]: '2',
      origin: 'import',
      [clark('urn:x', 'note')]: 'n',
    });
  });

  test('test lists the attributes: the wrapper’s, inherited ones, groups’, simple content’s; prohibited ones gone', async () => {
    const res = await fixture.h.call(fixture.auth, {
      method: 'POST',
      url: '/api/v1/integrations/edges/execute',
      payload: { operation: 'test' },
    });
    const signatures = (ok(res).details as { services: Array<{ ports: Array<{ signatures: unknown[] }> }> }).services[0].ports[0]
      .signatures as Array<Record<string, unknown>>;
    const put = signatures.find((s) => s.operation === 'PutItem');
    const string = (name: string, required: boolean) => ({ name, type: 'xs:string', required });
    assert.deepEqual(put?.attributes, [string('trace', true)]);
    const [item, locked] = (put?.parameters ?? []) as Array<Record<string, unknown>>;
    assert.deepEqual(item.attributes, [
      { name: 'version', type: 'xs:int', required: true },
      string('origin', false),
      { name: 'revision', type: 'xs:int', required: false },
      { name: 'kind', type: 'Kind', required: true, enum: ['BOOK', 'MUSIC'] },
      string('by', true),
      { name: 'at', type: 'xs:dateTime', required: true },
    ]);
    const price = (item.children as Array<Record<string, unknown>>).find((c) => c.name === 'price');
    assert.deepEqual(price?.attributes, [{ name: 'currency', type: 'xs:string', required: true, enum: ['EUR', 'USD'] }]);
    assert.deepEqual(locked.attributes, [
      { name: 'version', type: 'xs:int', required: true },
      { name: 'revision', type: 'xs:int', required: false },
    ]);
    const get = signatures.find((s) => s.operation === 'GetItem');
    assert.deepEqual(get?.parameters, []);
    assert.deepEqual(get?.attributes, [
      { name: 'id', type: 'xs:int', required: true },
      { name: 'withHistory', type: 'xs:boolean', required: false },
    ]);
  });

  test('attribute values are checked against their types, and unknown and prohibited ones refused, before sending', async () => {
    const sample = samples.PutItem;
    const item = sample.params.item as Record<string, Record<string, unknown>>;
    const locked = sample.params.locked as Record<string, Record<string, unknown>>;
    endpoint().requests.length = 0;
    const refused = assertError(
      await send('PutItem', {
        $attributes: { trace: 't' },
        item: { ...item, $attributes: { ...item.$attributes, version: 'v2', kind: 'FOOD', by: undefined } },
        locked: { ...locked, $attributes: { version: 1, origin: 'x', colour: 'red' } },
      }),
      400,
      'invalid_soap_params',
    );
    assert.deepEqual(
      ((refused.details?.issues ?? []) as Array<{ path: string }>).map((i) => i.path),
      [
        'params.item.$attributes.version',
        'params.item.$attributes.kind',
        'params.item.$attributes.by',
        'params.locked.$attributes.origin',
        'params.locked.$attributes.colour',
      ],
    );
    assertError(await send('GetItem', {}), 400, 'invalid_soap_params');
    assert.equal(endpoint().requests.length, 0);
  });

  test('an answer’s attributes are typed by the schema; xsi:type annotations dropped', async () => {
    endpoint().answer =
      '<e:GetItemResponse xmlns:e="urn:edges" xmlns:c="urn:edges:common" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ' +
      'c:version="3" kind="BOOK" c:by="ann" c:at="2024-01-02T03:04:05Z"><id xsi:type="xsd:int">5</id><e:name>x</e:name>' +
      '<e:price currency="EUR">9.99</e:price></e:GetItemResponse>';
    try {
      assert.deepEqual(ok(await send('GetItem', { $attributes: { id: 5 } })), {
        $attributes: { version: 3, kind: 'BOOK', by: 'ann', at: '2024-01-02T03:04:05Z' },
        id: 5,
        name: 'x',
        price: { $attributes: { currency: 'EUR' }, $value: '9.99' },
      });
    } finally {
      endpoint().answer = '';
    }
  });
});
