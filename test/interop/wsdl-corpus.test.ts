import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { body, type Harness } from '../support/harness.ts';
import {
  type CorpusEntry,
  type CorpusServer,
  corpusApp,
  corpusEntries,
  describeWithCorpus,
  phpFunctions,
  serveCorpus,
  type ZeepReading,
  zeepReadings,
} from '../support/wsdl-corpus.ts';

type Services = Array<{ name: string; ports: Array<{ name: string; soap_version: string; operations: string[] }> }>;

/**
 * Two oracles: python-zeep first. Where zeep cannot read a WSDL, or leaves out operations whose parts it cannot
 * resolve (an element no schema declares, a type written without a usable namespace), PHP's SoapClient (ext/soap) is
 * asked: Interchange must list what one of them lists. Operations whose messages the WSDL never declares are left
 * out by Interchange as by zeep (PHP refuses such a WSDL whole).
 */
/** The operations of every SOAP port as Interchange's `test` lists them, each name once, sorted (as zeep's). */
function normalise(services: Services): Services {
  return services.map((service) => ({
    name: service.name,
    ports: service.ports.map((port) => ({
      name: port.name,
      soap_version: port.soap_version,
      operations: [...new Set(port.operations)].sort(),
    })),
  }));
}

describeWithCorpus('real-world WSDLs: Interchange lists the operations python-zeep reads (issue 9)', () => {
  let corpus: CorpusServer;
  let h: Harness;
  let auth: { key: string; tenant: string };
  let entries: CorpusEntry[];
  let zeep: Record<string, ZeepReading>;

  before(async () => {
    corpus = await serveCorpus();
    ({ h, auth } = await corpusApp());
    entries = corpusEntries();
    zeep = await zeepReadings(entries.map((entry) => corpus.url(entry)));
  });
  after(async () => {
    await h?.close();
    await corpus?.close();
  });

  test('the corpus is there: 61 WSDLs, each with a main document that declares a service', () => {
    assert.equal(entries.length, 61, entries.map((e) => e.name).join(', '));
  });

  test('for every WSDL, the services, SOAP ports, versions and operations agree with zeep, else with PHP', async (t) => {
    const mismatches: string[] = [];
    const php = await phpFunctions(entries.map((entry) => corpus.url(entry)));
    for (const entry of entries) {
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/${entry.name}`,
        payload: { connector: 'soap-1.0.0', config: { endpoint_url: corpus.url(entry) } },
      });
      assert.equal(put.statusCode, 201, put.body);
      const res = await h.call(auth, {
        method: 'POST',
        url: `/api/v1/integrations/${entry.name}/execute`,
        payload: { operation: 'test' },
      });
      assert.equal(res.statusCode, 200, `${entry.name}: ${res.body.slice(0, 300)}`);
      const ours = normalise(body(res).data.details.services);
      const theirs = zeep[corpus.url(entry)];
      if ('services' in theirs && JSON.stringify(ours) === JSON.stringify(theirs.services)) continue;
      // The second oracle: the operations PHP's SoapClient offers, against every operation Interchange lists.
      const offered = php[corpus.url(entry)];
      const listed = [...new Set(ours.flatMap((s) => s.ports.flatMap((p) => p.operations)))].sort();
      const zeepSays = 'error' in theirs ? `zeep failed (${theirs.error})` : 'zeep differs';
      if (Array.isArray(offered) && JSON.stringify(listed) === JSON.stringify(offered)) {
        t.diagnostic(`${entry.name}: ${zeepSays}; PHP's SoapClient lists the same ${offered.length} operations`);
      } else {
        mismatches.push(
          `${entry.name}: ${zeepSays}, and PHP ${Array.isArray(offered) ? 'differs' : `failed (${offered.error})`}`,
        );
      }
    }
    assert.deepEqual(mismatches, []);
  });
});
