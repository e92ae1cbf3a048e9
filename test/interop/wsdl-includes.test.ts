import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertOk as ok } from '../support/assertions.ts';
import { type WsdlFixture, wsdlFixture, zeepReplies, zeepSamples } from '../support/wsdl-corpus.ts';
import { compareXml } from '../support/xml-compare.ts';

/**
 * How WSDL mode finds a WSDL's schema documents (issue 23, wsdl-loader.ts), on a fixture of ours
 * (test/support/fixtures/soap/includes): a chameleon include whose elementFormDefault differs from its includer's, an import
 * whose document includes a part in a subfolder that includes it back. python-zeep is the oracle, for the envelope
 * and for the answer.
 */

describe('WSDL mode: includes, imports and chameleon schemas', () => {
  let fixture: WsdlFixture;

  const execute = (payload: Record<string, unknown>) =>
    fixture.h.call(fixture.auth, { method: 'POST', url: '/api/v1/integrations/includes/execute', payload });

  before(async () => {
    fixture = await wsdlFixture('includes', 'includes.wsdl', 'includes');
  });
  after(() => fixture?.close());

  test('each document is fetched once, the cycle and the subfolder included', async () => {
    ok(await execute({ operation: 'test' }));
    const fetched = fixture.files.fetched.map((url) => new URL(url, 'http://x').pathname).sort();
    assert.deepEqual(fetched, ['/chameleon.xsd', '/includes.wsdl', '/other.xsd', '/sub/part.xsd']);
  });

  let params: Record<string, unknown>;

  test("the envelope is zeep's: the chameleon's local elements unqualified, in urn:inc's types, the import's qualified", async () => {
    const built = (await zeepSamples([fixture.wsdl]))[fixture.wsdl];
    assert.ok(Array.isArray(built) && built.length === 1, JSON.stringify(built));
    const [sample] = built;
    assert.ok('envelope' in sample, JSON.stringify(sample));
    params = sample.params;
    fixture.endpoint.requests.length = 0;
    ok(await execute({ operation: 'send', method: 'Submit', params: sample.params }));
    assert.deepEqual(compareXml(fixture.endpoint.requests[0].body, sample.envelope), []);
    // What the fixture is about, said outright: zeep's envelope has an unqualified <street> inside a qualified <address>.
    assert.match(sample.envelope, /<ns0:address><street>/);
  });

  test("the answer reads as zeep reads it: the chameleon's zip an int, the import's Grams (a long) a number, one parcel a list", async () => {
    const body =
      '<i:SubmitResponse xmlns:i="urn:inc" xmlns:o="urn:other"><i:accepted>true</i:accepted>' +
      '<i:address><street>Main 1</street><zip>1234</zip></i:address>' +
      '<i:parcel><o:weight>1500</o:weight><o:fragile>false</o:fragile></i:parcel></i:SubmitResponse>';
    fixture.endpoint.answer = body;
    const data = ok(await execute({ operation: 'receive', method: 'Submit', params }));
    const envelope = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${body}</s:Body></s:Envelope>`;
    const [zeep] = await zeepReplies([{ wsdl: fixture.wsdl, operation: 'Submit', reply: envelope }]);
    assert.ok('value' in zeep, JSON.stringify(zeep));
    const expected = {
      accepted: true,
      address: { street: 'Main 1', zip: 1234, floor: null },
      parcel: [{ weight: 1500, fragile: false }],
    };
    assert.deepEqual(zeep.value, expected);
    // zeep reports the absent optional floor as null; Interchange leaves an absent element out.
    assert.deepEqual(data, {
      accepted: true,
      address: { street: 'Main 1', zip: 1234 },
      parcel: [{ weight: 1500, fragile: false }],
    });
  });
});
