/**
 * `BENCH_ONLY=answer-reading npm run bench` (or `node bench/answer-reading.ts`): what reading hostile and large SOAP
 * answers costs, measured rather than asserted in the tests (test/api/upstream-bounds.test.ts holds what they do, this what
 * they cost; a loaded machine cannot fail it):
 *   - CPU to refuse an answer of 1,000,001 elements: its pre-scan refuses it before any parsing;
 *   - CPU to read a valid 10 MiB SOAP answer against a quarter of it, read first in the same run: linear reading reads
 *     4x the records in about 4x the time (16x if it were quadratic).
 */
import { readSoapResponse } from '../src/connectors/soap/response.ts';
import { parseXml } from '../src/connectors/soap/xml.ts';
import { maxXmlNodes } from '../src/connectors/soap/xml-bounds.ts';

const cpuMs = (work: () => unknown): number => {
  const started = process.cpuUsage();
  try {
    work();
  } catch {
    // A refusal is the outcome measured.
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
};

const envelope = (body: string) =>
  `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`;

export function runAnswerReadingBench(): string {
  const million = `<r><a b="1"/>${'<a/>'.repeat(maxXmlNodes - 1)}</r>`;
  const refuseMs = cpuMs(() => parseXml(million));

  const record = '<item id="7"><sku>A-1</sku><name>Widget &amp; co</name><price>9.99</price><tags><t>a</t><t>b</t></tags></item>';
  const count = Math.floor((10 * 1024 * 1024 - 200) / record.length);
  const answer = Buffer.from(envelope(`<GetResponse>${record.repeat(count)}</GetResponse>`));
  const quarter = Buffer.from(envelope(`<GetResponse>${record.repeat(Math.floor(count / 4))}</GetResponse>`));
  readSoapResponse(200, {}, quarter); // warm
  const quarterMs = cpuMs(() => readSoapResponse(200, {}, quarter));
  const wholeMs = cpuMs(() => readSoapResponse(200, {}, answer));

  return [
    '| answer | CPU (ms) |',
    '|---|--:|',
    `| ${maxXmlNodes + 1} elements and attributes, refused | ${refuseMs.toFixed(0)} |`,
    `| valid SOAP answer, 2.5 MiB | ${quarterMs.toFixed(0)} |`,
    `| valid SOAP answer, 10 MiB | ${wholeMs.toFixed(0)} (${(wholeMs / quarterMs).toFixed(1)}x the quarter; linear is 4x) |`,
  ].join('\n');
}

if (import.meta.main) console.log(runAnswerReadingBench());
