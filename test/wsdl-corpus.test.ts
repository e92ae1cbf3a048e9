import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { body, type Harness } from './helpers/harness.ts';
import {
  type CorpusEntry,
  type CorpusServer,
  corpusApp,
  corpusEntries,
  describeWithCorpus,
  serveCorpus,
  type ZeepReading,
  zeepReadings,
} from './helpers/wsdl-corpus.ts';

type Services = Array<{ name: string; ports: Array<{ name: string; soap_version: string; operations: string[] }> }>;

/**
 * Where Interchange and python-zeep read a corpus WSDL differently today, and why; issue 9 closes these. The test
 * pins each difference exactly: a fix (or a new difference) fails it until this list says so.
 *
 * In the first three, zeep is right: the operations it leaves out reference what the WSDL never declares, so they
 * cannot be called as described; node-soap lists them all the same.
 */
const knownDifferences: Record<string, { extra: string[]; why: string } | { zeepFails: true; why: string }> = {
  'amazon-fps': {
    extra: ['GetRecipientVerificationStatus'],
    why: 'its messages name an element the schema does not declare',
  },
  'axis1-dataexchange': {
    extra: ['getNext', 'getParticularBatch', 'submit'],
    why: 'their parts have type="YFUDataExchange" (and the like): unqualified, with no default namespace to resolve it',
  },
  geotrust: { extra: ['GetQuickApproverList'], why: 'the portType names messages the WSDL never declares' },
  'rpc-iws': {
    zeepFails: true,
    why: 'zeep cannot resolve types in the namespace "urn:" that the WSDL declares; a second oracle is needed here',
  },
};

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

  test('for every WSDL, the services, SOAP ports, versions and operations agree, but for the known differences', async () => {
    const mismatches: string[] = [];
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
      const known = knownDifferences[entry.name];
      if (known === undefined) {
        if ('error' in theirs) mismatches.push(`${entry.name}: zeep failed (${theirs.error})`);
        else if (JSON.stringify(ours) !== JSON.stringify(theirs.services)) mismatches.push(`${entry.name}: differs`);
      } else if ('zeepFails' in known) {
        assert.ok('error' in theirs, `${entry.name}: zeep reads it now; compare it (and update knownDifferences)`);
        assert.ok(
          ours.some((s) => s.ports.some((p) => p.operations.length > 0)),
          `${entry.name}: no operations`,
        );
      } else {
        assert.ok('services' in theirs, `${entry.name}: ${JSON.stringify(theirs)}`);
        // Ours is zeep's plus exactly the listed operations, in the same services and ports.
        const withoutExtra = ours.map((s) => ({
          ...s,
          ports: s.ports.map((p) => ({ ...p, operations: p.operations.filter((o) => !known.extra.includes(o)) })),
        }));
        assert.deepEqual(withoutExtra, theirs.services, `${entry.name}: ${known.why}`);
        const listed = ours.flatMap((s) => s.ports.flatMap((p) => p.operations));
        for (const extra of known.extra) assert.ok(listed.includes(extra), `${entry.name} no longer lists ${extra}`);
      }
    }
    assert.deepEqual(mismatches, []);
  });
});
