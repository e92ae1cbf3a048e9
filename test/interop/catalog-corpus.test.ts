import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CatalogOperation } from '../../src/connectors/catalog.ts';
import { soapCatalog } from '../../src/connectors/soap/catalog.ts';
import { paramIssues } from '../../src/connectors/soap/param-checks.ts';
import { readSoapResponse } from '../../src/connectors/soap/response.ts';
import { shapeResult } from '../../src/connectors/soap/result-shape.ts';
import { operationLayout } from '../../src/connectors/soap/signature.ts';
import type { BoundOperation } from '../../src/connectors/soap/wsdl-documents.ts';
import { loadWsdlDocuments } from '../../src/connectors/soap/wsdl-loader.ts';
import { compileWsdl, type WsdlModel } from '../../src/connectors/soap/wsdl-model.ts';
import {
  type CorpusEntry,
  type CorpusServer,
  corpusDir,
  corpusEntries,
  describeWithCorpus,
  serveCorpus,
  type ZeepAnswer,
  type ZeepSample,
  type ZeepSampleError,
} from '../support/wsdl-corpus.ts';

/**
 * The catalogue's schemas against python-zeep (docs/catalog.md): for every operation of every port of every corpus WSDL,
 * zeep builds a sample call from its own model of the input (test/support/oracle/zeep_oracle.py, here asked for every
 * operation rather than three per port) and a sample answer from its model of the output. The sample's params must
 * validate against the entry's `input_schema` (those that break a facet, which execute refuses too, are listed apart),
 * and the `data` Interchange reads from the sample answer (response.ts, then result-shape.ts, as execute reads it)
 * against its `output_schema`. Every schema compiles under strict Ajv; formats are asserted, as the MCP server's Ajv
 * asserts them.
 */

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Samples = Record<string, Array<ZeepSample | ZeepSampleError> | { error: string }>;
type Answers = Record<string, Array<ZeepAnswer | ZeepSampleError> | { error: string }>;

/** zeep_oracle.py with every operation of each port sampled (its `sample_operations` replaced), in one Python process. */
async function zeepForEveryOperation<T>(mode: '--samples' | '--answers', urls: string[]): Promise<T> {
  const oracle = resolve(import.meta.dirname, '../support/oracle');
  const program = [
    'import sys',
    `sys.path.insert(0, ${JSON.stringify(oracle)})`,
    'import zeep_oracle',
    'zeep_oracle.sample_operations = lambda binding: sorted(set(binding._operations))',
    'zeep_oracle.main(sys.argv[1:])',
  ].join('\n');
  const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', program, mode, ...urls], {
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    env: { ...process.env, IX_WSDL_CORPUS: corpusDir },
  });
  return JSON.parse(stdout) as T;
}

/** A corpus WSDL compiled as execute compiles it, its documents read from the corpus folder. */
async function compiled(entry: CorpusEntry): Promise<WsdlModel> {
  const documents = await loadWsdlDocuments(`http://corpus.test/${entry.name}/${entry.main}`, async (url) =>
    readFileSync(resolve(corpusDir, `.${decodeURIComponent(new URL(url).pathname)}`), 'utf8'),
  );
  return compileWsdl(documents);
}

/**
 * Strict Ajv with the formats asserted; every schema must compile. `inlineRefs: false`: Ajv otherwise compiles a shared
 * type again at each of its uses (an EWS answer's schema then takes seconds, not milliseconds).
 */
function validator(): (schema: Record<string, unknown>) => ValidateFunction {
  const ajv = new Ajv2020({ strict: true, allErrors: false, inlineRefs: false });
  addFormats(ajv);
  return (schema) => ajv.compile(schema);
}

/** zeep's error without what differs from one operation to the next (names, counts, quoted values): a reason. */
function reasonOf(error: string): string {
  return error
    .split('\n')[0]
    .replace(/'[^']*'|"[^"]*"|\{[^}]*\}\S*/g, '…')
    .replace(/\s*\([^()]*\)?\s*$/, '')
    .replace(/\d+/g, 'N')
    .slice(0, 100);
}

interface Found {
  entry: CatalogOperation;
  operation: BoundOperation;
}

describeWithCorpus('real-world WSDLs: the catalogue’s schemas take zeep’s sample calls and answers', () => {
  let corpus: CorpusServer;
  let entries: CorpusEntry[];
  let samples: Samples;
  let answers: Answers;

  before(async () => {
    corpus = await serveCorpus();
    entries = corpusEntries();
    const urls = entries.map((entry) => corpus.url(entry));
    [samples, answers] = await Promise.all([
      zeepForEveryOperation<Samples>('--samples', urls),
      zeepForEveryOperation<Answers>('--answers', urls),
    ]);
  });
  after(async () => {
    await corpus?.close();
  });

  test('every sample call fits its input schema, and every sample answer’s data its output schema', async (t) => {
    const compile = validator();
    const counts = { wsdls: 0, operations: 0, params: 0, answers: 0 };
    const facetBreaking: string[] = [];
    const skipped = new Map<string, string[]>();
    const skip = (reason: string, key: string) => skipped.set(reason, [...(skipped.get(reason) ?? []), key]);
    const failures: string[] = [];
    for (const entry of entries) {
      const url = corpus.url(entry);
      const model = await compiled(entry);
      const catalog = soapCatalog(model, {}, new Set());
      counts.wsdls++;
      counts.operations += catalog.length;
      // Each port's entries by operation name (overloads: several), with the operation each runs: the catalogue lists
      // them in the WSDL's order.
      const byCall = new Map<string, Found[]>();
      let at = 0;
      for (const service of model.services) {
        for (const port of service.ports) {
          for (const operation of port.operations) {
            const key = `${service.name}/${port.name}/${operation.name}`;
            byCall.set(key, [...(byCall.get(key) ?? []), { entry: catalog[at++], operation }]);
          }
        }
      }
      assert.equal(at, catalog.length, `${entry.name}: one entry per operation`);
      const sampled = samples[url];
      if (!Array.isArray(sampled)) {
        skip(`zeep cannot read the WSDL`, `${entry.name} (${sampled?.error.slice(0, 120)})`);
        continue;
      }
      for (const sample of sampled) {
        const key = `${entry.name} ${sample.service}/${sample.port}/${sample.operation}`;
        const found = byCall.get(`${sample.service}/${sample.port}/${sample.operation}`) ?? [];
        if ('error' in sample) {
          skip(`zeep built no sample call (${reasonOf(sample.error)})`, key);
          continue;
        }
        if (found.length === 0) {
          failures.push(`${key}: no catalogue entry`);
          continue;
        }
        counts.params++;
        const verdicts = found.map(({ entry: e, operation }) => ({
          schema: compile(e.input_schema)(sample.params),
          issues: paramIssues(operationLayout(model.schema, operation).input.model, sample.params, 'params', operation.name),
        }));
        if (verdicts.some((v) => v.issues.length === 0)) {
          if (!verdicts.some((v) => v.issues.length === 0 && v.schema)) failures.push(`${key}: params refused by the schema`);
        } else {
          const first = verdicts[0].issues[0];
          const agreed = verdicts.every((v) => !v.schema);
          facetBreaking.push(`${key}: ${first.path} ${first.message} (schema ${agreed ? 'refuses it too' : 'takes it'})`);
          if (!agreed)
            failures.push(`${key}: execute refuses the params (${first.path} ${first.message}), the schema takes them`);
        }
      }
      const answered = answers[url];
      if (!Array.isArray(answered)) continue;
      for (const answer of answered) {
        const key = `${entry.name} ${answer.service}/${answer.port}/${answer.operation}`;
        if ('error' in answer) {
          skip(`zeep built no answer (${reasonOf(answer.error)})`, key);
          continue;
        }
        const found = byCall.get(`${answer.service}/${answer.port}/${answer.operation}`) ?? [];
        counts.answers++;
        const read = found.map(({ entry: e, operation }) => {
          const output = operationLayout(model.schema, operation).output;
          const bodyParts = output !== undefined && output.wrapper === undefined && output.model.particles.length > 1;
          const result = readSoapResponse(200, { 'content-type': 'text/xml' }, Buffer.from(answer.reply), { bodyParts });
          const data = output ? shapeResult(output.model, result) : result;
          const validate = compile(e.output_schema);
          // Not a schema that takes anything: an answer's data is an object (a list for a SOAP-encoded array).
          if (validate('text')) failures.push(`${key}: the output schema takes a text`);
          return { data, ok: validate(data), errors: validate.errors };
        });
        if (!read.some((r) => r.ok)) {
          const error = read[0]?.errors?.[0];
          failures.push(`${key}: data refused by the output schema at ${error?.instancePath} ${error?.message}`);
        }
      }
    }
    t.diagnostic(
      `${counts.wsdls} WSDLs, ${counts.operations} operations; ${counts.params} sample calls checked ` +
        `(${facetBreaking.length} of them break a facet), ${counts.answers} sample answers checked`,
    );
    for (const line of facetBreaking) t.diagnostic(`breaks a facet: ${line}`);
    for (const [reason, keys] of skipped) {
      t.diagnostic(`skipped, ${reason}: ${keys.length} (${keys.slice(0, 5).join('; ')}${keys.length > 5 ? '; …' : ''})`);
    }
    assert.deepEqual(failures, []);
    assert.ok(counts.params >= 6000 && counts.answers >= 6000, `${counts.params} calls, ${counts.answers} answers checked`);
  });
});
