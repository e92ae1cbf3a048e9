import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { Harness } from '../support/harness.ts';
import {
  type CorpusEntry,
  type CorpusServer,
  corpusApp,
  corpusEntries,
  describeWithCorpus,
  recordingEndpoint,
  serveCorpus,
  type ZeepAnswer,
  zeepAnswers,
} from '../support/wsdl-corpus.ts';
import { parseQualified, type QualifiedElement } from '../support/xml-compare.ts';

/**
 * The answer side against python-zeep (issue 23): for every corpus WSDL, zeep builds a sample answer for each sampled
 * operation from its own model of the output, serializes it as a server would, and reads it back with its binding.
 * Interchange reads the same envelope (a local endpoint answers the sample call with it); its `data` must carry the
 * same values, with the same types and list-ness.
 *
 * The two shapes are brought together by the rules below and nothing else:
 * - Absent: zeep reports an absent element as null (an absent repeated one as []); Interchange leaves it out. Both
 *   are dropped.
 * - Empty: an empty element of a complex type with no text is null in zeep and {} in Interchange (an object none of
 *   whose members is there); zeep reads a complex element marked xsi:nil as an object of nulls, Interchange as null.
 *   An object with nothing left in it is dropped on both sides (null in a list).
 * - Attributes and text: Interchange gives attributes under `$attributes` and simple content's text under
 *   `$value`; zeep gives attributes as keys beside the elements and the text as `_value_1`. Interchange's are moved
 *   to zeep's places. Simple content with no attribute there is its value alone in Interchange, {_value_1} in zeep:
 *   zeep's is unwrapped.
 * - xsd:any: zeep gives what an `xsd:any` took as an XML element (`_value_1`, `_value_2`…, as {"$xml"} here),
 *   Interchange as raw mode reads it, by its local name. zeep's are read to that shape (by an XML parser that is not
 *   Interchange's: test/support/xml-compare.ts).
 * - Wildcards: where a type's `xsd:any` (processContents lax) stands before a declared element, zeep gives that
 *   element under the wildcard's `_value_N` (parsed, one item even of a repeated element) and the declared name
 *   as null; Interchange by its name. A `_value_N` of zeep's equal to a member of Interchange's that zeep lacks (or
 *   to its one item) takes that member's name.
 * - The top: zeep returns a document/literal answer's wrapper unwrapped (its only child's value), and that value
 *   unwrapped again when its type has one element and no attributes (zeep's DocumentMessage.deserialize); an answer
 *   with nothing in it is null. When the output declares headers, zeep returns {body, header} and unwraps nothing.
 *   Interchange's `data` is the wrapper's children, always. Interchange's is unwrapped as zeep's is.
 * No answer is left out: every sample zeep could build is compared.
 */

type Json = unknown;

const isObject = (value: Json): value is Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An element zeep kept as XML (what an xsd:any took), as Interchange's raw reading names it: {local: value}. */
function anyElement(xml: string): Record<string, Json> {
  const element = parseQualified(xml);
  const value = (node: QualifiedElement): Json =>
    node.children.length === 0 ? node.text : Object.fromEntries(node.children.map((child) => [child.local, value(child)]));
  return { [element.local]: value(element) };
}

/** zeep's value: what is absent or empty dropped, xsd:any elements by their names, bare `_value_1`s unwrapped. */
function normaliseZeep(value: Json): Json {
  if (Array.isArray(value)) return value.map((item) => emptied(normaliseZeep(item)));
  if (!isObject(value)) return value;
  if (typeof value.$xml === 'string' && Object.keys(value).length === 1) return anyElement(value.$xml);
  const present = Object.keys(value).filter((key) => value[key] !== null);
  if (present.length === 1 && present[0] === '_value_1' && !isObject(value._value_1)) return value._value_1;
  const out: Record<string, Json> = {};
  for (const [key, item] of Object.entries(value)) {
    if (/^_value_\d+$/.test(key) && isObject(item) && typeof item.$xml === 'string') {
      Object.assign(out, anyElement(item.$xml));
      continue;
    }
    const normalised = normaliseZeep(item);
    if (emptied(normalised) !== null) out[key] = normalised;
  }
  return out;
}

/** Interchange's value in zeep's places: attributes beside the elements, `$value` as `_value_1`, empties dropped. */
function normaliseOurs(value: Json): Json {
  if (Array.isArray(value)) return value.map((item) => emptied(normaliseOurs(item)));
  if (!isObject(value)) return value;
  const out: Record<string, Json> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$attributes' && isObject(item)) Object.assign(out, item);
    else if (key === '$value') out._value_1 = item;
    else {
      const normalised = normaliseOurs(item);
      if (emptied(normalised) !== null) out[key] = normalised;
    }
  }
  return out;
}

/** null for what is absent or empty (null, [], an object with nothing in it); the value otherwise. */
function emptied(value: Json): Json {
  if (value === null || (Array.isArray(value) && value.length === 0)) return null;
  return isObject(value) && Object.keys(value).length === 0 ? null : value;
}

/** zeep's `_value_N` renamed where it holds what Interchange has by name (the wildcard rule), at every depth. */
function aligned(ours: Json, zeep: Json): Json {
  if (Array.isArray(ours) && Array.isArray(zeep)) return zeep.map((item, i) => aligned(ours[i], item));
  if (!isObject(ours) || !isObject(zeep)) return zeep;
  const out: Record<string, Json> = {};
  const unmatched = Object.keys(ours).filter((key) => !(key in zeep));
  for (const [key, item] of Object.entries(zeep)) {
    const named = /^_value_\d+$/.test(key) ? unmatched.find((k) => isDeepStrictEqual(ours[k], item)) : undefined;
    const listed = /^_value_\d+$/.test(key) ? unmatched.find((k) => isDeepStrictEqual(ours[k], [item])) : undefined;
    if (named !== undefined) out[named] = item;
    else if (listed !== undefined) out[listed] = [item];
    else out[key] = aligned(ours[key], item);
  }
  return out;
}

/** Both sides brought together (the rules above): [Interchange's, zeep's]. */
function comparable(data: Json, zeepValue: Json): [Json, Json] {
  const [ours, zeep] = top(emptied(normaliseOurs(data)), emptied(normaliseZeep(zeepValue)));
  return [ours, aligned(ours, zeep)];
}

/** The top rule: Interchange's data unwrapped as zeep unwraps its result. */
function top(ours: Json, zeep: Json): [Json, Json] {
  if (isObject(zeep) && 'body' in zeep && Object.keys(zeep).every((key) => key === 'body' || key === 'header')) {
    return [ours, zeep.body ?? null];
  }
  if (!isObject(ours)) return [ours, zeep];
  const keys = Object.keys(ours);
  if (keys.length > 1) return [ours, zeep];
  const child = ours[keys[0]];
  // zeep's second unwrapping: a value whose type has one element and no attributes.
  if (isObject(child) && Object.keys(child).length === 1 && !(isObject(zeep) && keys[0] in zeep)) {
    const [only] = Object.keys(child);
    if (!(isObject(zeep) && only in zeep)) return [child[only], zeep];
  }
  return [child, zeep];
}

/** Where two values first differ, and how: `.a.b[2]: Interchange 1, zeep "1"`. */
function firstDifference(ours: Json, zeep: Json, path: string): string {
  if (isObject(ours) && isObject(zeep)) {
    for (const key of new Set([...Object.keys(ours), ...Object.keys(zeep)])) {
      if (!isDeepStrictEqual(ours[key], zeep[key])) return firstDifference(ours[key], zeep[key], `${path}.${key}`);
    }
  }
  if (Array.isArray(ours) && Array.isArray(zeep) && ours.length === zeep.length) {
    const i = ours.findIndex((item, n) => !isDeepStrictEqual(item, zeep[n]));
    if (i !== -1) return firstDifference(ours[i], zeep[i], `${path}[${i}]`);
  }
  const shown = (value: Json) => (value === undefined ? 'absent' : JSON.stringify(value).slice(0, 200));
  return `${path || 'the result'}: Interchange ${shown(ours)}, zeep ${shown(zeep)}`;
}

describeWithCorpus('real-world WSDLs: Interchange reads the answers python-zeep reads (issue 23)', () => {
  let corpus: CorpusServer;
  let endpoint: Awaited<ReturnType<typeof recordingEndpoint>>;
  let h: Harness;
  let auth: { key: string; tenant: string };
  let entries: CorpusEntry[];
  let answers: Awaited<ReturnType<typeof zeepAnswers>>;

  before(async () => {
    [corpus, endpoint] = await Promise.all([serveCorpus(), recordingEndpoint()]);
    ({ h, auth } = await corpusApp());
    entries = corpusEntries();
    answers = await zeepAnswers(entries.map((entry) => corpus.url(entry)));
  });
  after(async () => {
    await h?.close();
    await endpoint?.close();
    await corpus?.close();
  });

  test('every sample answer reads to the values, types and lists zeep reads', async (t) => {
    const differences: string[] = [];
    let compared = 0;
    let unbuilt = 0;
    for (const entry of entries) {
      const url = corpus.url(entry);
      const found = answers[url];
      if (!Array.isArray(found)) continue; // zeep cannot read the WSDL at all (wsdl-corpus.test.ts pins which)
      const id = entry.name.replace(/[^a-z0-9-]/g, '-');
      const put = await h.call(auth, {
        method: 'PUT',
        url: `/api/v1/integrations/answers-${id}`,
        payload: { connector: 'soap-1.0.0', config: { endpoint_url: url, service_url: endpoint.url } },
      });
      assert.equal(put.statusCode, 201, put.body);
      for (const answer of found) {
        const key = `${entry.name} ${answer.port}.${answer.operation}`;
        if ('error' in answer) {
          unbuilt++;
          t.diagnostic(`${key}: zeep built no answer (${answer.error})`);
          continue;
        }
        const sample = answer as ZeepAnswer;
        endpoint.envelope = sample.reply;
        const res = await h.call(auth, {
          method: 'POST',
          url: `/api/v1/integrations/answers-${id}/execute`,
          payload: {
            operation: 'send',
            service: sample.service,
            port: sample.port,
            method: sample.operation,
            params: sample.params,
            ...(Object.keys(sample.soap_headers).length > 0 && { soap_headers: sample.soap_headers }),
          },
        });
        compared++;
        if (res.statusCode !== 200) {
          differences.push(`${key}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          continue;
        }
        const [actual, expected] = comparable(JSON.parse(res.body).data, sample.value);
        try {
          assert.deepStrictEqual(actual, expected);
        } catch {
          differences.push(`${key}: ${firstDifference(actual, expected, '')}`);
        }
      }
    }
    endpoint.envelope = undefined;
    t.diagnostic(`${compared} answers compared, ${unbuilt} zeep could not build`);
    assert.ok(compared >= 240, `${compared} answers compared`);
    assert.deepEqual(differences, []);
  });
});
