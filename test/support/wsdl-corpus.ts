import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type Auth, type Harness, harness } from './harness.ts';

const checkout = resolve(import.meta.dirname, '../..');

/** Whether the corpus tests run here, and if not, whether that is a skip (a fresh clone) or a failure (CI). */
export interface CorpusGate {
  /** The corpus folder: IX_WSDL_CORPUS (relative to the checkout), by default ../shared/wsdl-corpus beside it. */
  dir: string;
  /** Set when the tests are skipped: what is missing and how to get it. */
  skip?: string;
  /** Set when a missing corpus is a failure: under CI, or when IX_WSDL_CORPUS names a folder that is not there. */
  fail?: string;
}

/**
 * The corpus is not in the repository (never copy it in): a clone without it skips its tests, saying so in one line;
 * CI (CI=true) has ../shared beside its clone, so there, as when IX_WSDL_CORPUS was set on purpose, absence fails.
 */
export function corpusGate(env: Readonly<Record<string, string | undefined>>, isFolder: (path: string) => boolean): CorpusGate {
  const dir = resolve(checkout, env.IX_WSDL_CORPUS || '../shared/wsdl-corpus');
  if (isFolder(dir)) return { dir };
  const missing = `no WSDL corpus at ${dir}`;
  if (env.IX_WSDL_CORPUS) return { dir, fail: `${missing}, the folder IX_WSDL_CORPUS names` };
  if (env.CI && env.CI !== 'false') return { dir, fail: `${missing}: CI must run the corpus tests (../shared beside the clone)` };
  return { dir, skip: `${missing}: set IX_WSDL_CORPUS to the folder holding it, or put ../shared beside the checkout` };
}

const gate = corpusGate(process.env, (path) => existsSync(path) && statSync(path).isDirectory());

/** The corpus of real-world WSDLs; read, never written. */
export const corpusDir = gate.dir;

/**
 * `describe(name, body)` when the corpus is there. Otherwise one test in its place: skipped with the reason (one line
 * in the test report), or failed when the corpus must be there (`CorpusGate.fail`).
 */
export function describeWithCorpus(name: string, body: () => void): void {
  const { skip, fail } = gate;
  if (fail !== undefined) test(name, () => assert.fail(fail));
  else if (skip !== undefined) test(name, { skip }, () => {});
  else describe(name, body);
}

/** Debian's Python, which has python3-zeep and python3-suds (.ci/run installs them); not a pyenv shim on PATH. */
const debianPython = '/usr/bin/python3';
const oracleScript = resolve(import.meta.dirname, './oracle/zeep_oracle.py');

export interface CorpusEntry {
  /** The entry's folder name, e.g. `asmx-currencyconvertor`. */
  name: string;
  /** The file a client is pointed at: the WSDL of the entry that declares a service. */
  main: string;
}

/** Every entry of the corpus with its main WSDL: of the entry's `.wsdl` files, the first (by name) with a service. */
export function corpusEntries(): CorpusEntry[] {
  return readdirSync(corpusDir)
    .filter((name) => !name.startsWith('_') && statSync(join(corpusDir, name)).isDirectory())
    .sort()
    .flatMap((name) => {
      const wsdls = readdirSync(join(corpusDir, name))
        .filter((file) => file.endsWith('.wsdl'))
        .sort();
      const main = wsdls.find((file) => /<(?:[\w-]+:)?service[\s>]/.test(readFileSync(join(corpusDir, name, file), 'utf8')));
      return main === undefined ? [] : [{ name, main }];
    });
}

export interface CorpusServer {
  /** `http://127.0.0.1:PORT/<entry>/<file>` */
  url(entry: CorpusEntry): string;
  /** GETs served, by path: what a client fetched. */
  readonly fetched: string[];
  close(): Promise<void>;
}

/** Serves the corpus read-only on 127.0.0.1, so that relative imports resolve as they would against the real servers. */
export async function serveCorpus(): Promise<CorpusServer> {
  const server = await serveDirectory(corpusDir);
  return { url: (entry) => server.url(`${entry.name}/${entry.main}`), fetched: server.fetched, close: server.close };
}

/** The files under `dir`, served read-only on 127.0.0.1: `url('edges.wsdl')`. */
export async function serveDirectory(
  dir: string,
): Promise<{ url(path: string): string; readonly fetched: string[]; close(): Promise<void> }> {
  const fetched: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    fetched.push(path);
    const file = normalize(join(dir, path));
    if (!file.startsWith(dir + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' }).end(readFileSync(file));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    fetched,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** One request a recording endpoint received. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A SOAP endpoint on 127.0.0.1 that records each request and answers `answer` (by default an empty Body of the
 * request's SOAP version): what Interchange sends, seen from the other side.
 */
export async function recordingEndpoint(): Promise<{
  url: string;
  requests: Recorded[];
  /** The Body's content of the next answers ('' : an empty Body). */
  answer: string;
  /** The whole envelope of the next answers, when set (`answer` is then not used). */
  envelope: string | undefined;
  close(): Promise<void>;
}> {
  const requests: Recorded[] = [];
  const endpoint = {
    url: '',
    requests,
    answer: '',
    envelope: undefined as string | undefined,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
    const soap12 = (req.headers['content-type'] ?? '').startsWith('application/soap+xml');
    const envelope = soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/';
    res
      .writeHead(200, { 'content-type': soap12 ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8' })
      .end(
        endpoint.envelope ??
          `<?xml version="1.0"?><s:Envelope xmlns:s="${envelope}"><s:Body>${endpoint.answer}</s:Body></s:Envelope>`,
      );
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/soap`;
  return endpoint;
}

export interface ZeepPort {
  name: string;
  soap_version: '1.1' | '1.2';
  operations: string[];
}

export type ZeepReading = { services: Array<{ name: string; ports: ZeepPort[] }> } | { error: string };

// The oracle reads xml.xsd from the corpus's _wellknown folder: the same folder as the tests, wherever it is.
const oracleOptions = {
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
  env: { ...process.env, IX_WSDL_CORPUS: corpusDir },
} as const;

/**
 * What python-zeep makes of each URL (test/support/oracle/zeep_oracle.py), in one Python process. Asynchronous: the corpus
 * server it fetches from runs in this process.
 */
export async function zeepReadings(urls: string[]): Promise<Record<string, ZeepReading>> {
  const { stdout } = await promisify(execFile)(debianPython, [oracleScript, ...urls], oracleOptions);
  return JSON.parse(stdout);
}

/** A sample call zeep built (test/support/oracle/zeep_oracle.py --samples): the params Interchange takes for it, and what zeep sends. */
export interface ZeepSample {
  service: string;
  port: string;
  operation: string;
  soap_version: '1.1' | '1.2';
  /** Element name → value (wrapper children for document/literal, part names for rpc), as Interchange's `params`. */
  params: Record<string, unknown>;
  /** The headers the binding declares, each with its required content, as Interchange's `soap_headers`. */
  soap_headers: Record<string, unknown>;
  /** The envelope zeep builds, without its WS-Addressing plugin. */
  envelope: string;
  /** The binding operation's soapAction, '' when it has none. */
  soap_action: string;
  /** The wsaw:Action zeep would add WS-Addressing headers for (left out of `envelope`), or null. */
  wsa_action: string | null;
}

/** A sample zeep could not build, with its reason. */
export interface ZeepSampleError {
  service: string;
  port: string;
  operation: string;
  soap_version: '1.1' | '1.2';
  error: string;
}

export type ZeepSamples = Array<ZeepSample | ZeepSampleError> | { error: string };

/** A sample answer zeep built and read (test/support/oracle/zeep_oracle.py --answers), with the sample call it answers. */
export interface ZeepAnswer extends ZeepSample {
  /** The envelope zeep serialized from its model of the output. */
  reply: string;
  /** What zeep's binding read `reply` to, as JSON (see the oracle for dates, decimals, bytes and xsd:any). */
  value: unknown;
}

/** zeep's sample answers for each URL (the operations --samples picks), in one Python process. */
export async function zeepAnswers(
  urls: string[],
): Promise<Record<string, Array<ZeepAnswer | ZeepSampleError> | { error: string }>> {
  const { stdout } = await promisify(execFile)(debianPython, [oracleScript, '--answers', ...urls], oracleOptions);
  return JSON.parse(stdout);
}

/** zeep's sample calls for each URL (up to three operations per SOAP port), in one Python process. */
export async function zeepSamples(urls: string[]): Promise<Record<string, ZeepSamples>> {
  const { stdout } = await promisify(execFile)(debianPython, [oracleScript, '--samples', ...urls], oracleOptions);
  return JSON.parse(stdout);
}

/** An answer for zeep to read: the WSDL (served on 127.0.0.1), the operation and the envelope it answered. */
export interface ZeepReplyCall {
  wsdl: string;
  operation: string;
  reply: string;
}

/**
 * What python-zeep's binding deserializes each answer to (test/support/oracle/zeep_oracle.py --replies): the oracle of the
 * answer side, in one Python process.
 */
export async function zeepReplies(calls: ZeepReplyCall[]): Promise<Array<{ value: unknown } | { error: string }>> {
  const run = promisify(execFile)(debianPython, [oracleScript, '--replies'], oracleOptions);
  run.child.stdin?.end(JSON.stringify(calls));
  return JSON.parse((await run).stdout);
}

/** A call for PHP's SoapClient (test/support/oracle/php_client.php): the WSDL, the operation, its params and the answer. */
export interface PhpClientCall {
  wsdl: string;
  operation: string;
  params: Record<string, unknown>;
  reply: string;
}

/** What PHP's SoapClient sends for each call and reads its answer to: a second oracle, from another ecosystem. */
export async function phpClient(
  calls: PhpClientCall[],
): Promise<Array<{ request: string; result: unknown } | { error: string }>> {
  const script = resolve(import.meta.dirname, './oracle/php_client.php');
  const run = promisify(execFile)('php', [script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  run.child.stdin?.end(JSON.stringify(calls));
  return JSON.parse((await run).stdout);
}

/** The operations PHP's SoapClient offers for each WSDL (sorted names), or why it cannot read it. */
export async function phpFunctions(urls: string[]): Promise<Record<string, string[] | { error: string }>> {
  const script = resolve(import.meta.dirname, './oracle/php_client.php');
  const { stdout } = await promisify(execFile)('php', [script, '--functions', ...urls], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

/** A WSDL fixture of ours, served, and an integration of it whose calls go to a recording endpoint (wsdlFixture). */
export interface WsdlFixture {
  files: Awaited<ReturnType<typeof serveDirectory>>;
  endpoint: Awaited<ReturnType<typeof recordingEndpoint>>;
  h: Harness;
  auth: Auth;
  /** The WSDL's URL. */
  wsdl: string;
  close(): Promise<void>;
}

/**
 * test/support/fixtures/soap/`folder` served on 127.0.0.1, a recording endpoint, a corpus app (corpusApp) and integration `id`
 * in WSDL mode on `file`, its calls sent to the endpoint.
 *
 * @example const fixture = await wsdlFixture('includes', 'includes.wsdl', 'includes'); … await fixture.close();
 */
export async function wsdlFixture(folder: string, file: string, id: string): Promise<WsdlFixture> {
  const [files, endpoint] = await Promise.all([
    serveDirectory(resolve(import.meta.dirname, './fixtures/soap', folder)),
    recordingEndpoint(),
  ]);
  const { h, auth } = await corpusApp();
  const wsdl = files.url(file);
  const put = await h.call(auth, {
    method: 'PUT',
    url: `/api/v1/integrations/${id}`,
    payload: { connector: 'soap-1.0.0', config: { endpoint_url: wsdl, service_url: endpoint.url } },
  });
  assert.equal(put.statusCode, 201, put.body);
  return {
    files,
    endpoint,
    h,
    auth,
    wsdl,
    async close() {
      await h.close();
      await endpoint.close();
      await files.close();
    },
  };
}

/**
 * An app for the corpus tests: the largest corpus WSDL is 3.1 MB (within the 10 MiB default, stated so that no
 * test hangs on it), and a key whose rate limit many calls in a row do not reach.
 */
export async function corpusApp(): Promise<{ h: Harness; auth: Auth }> {
  const h = await harness({ IX_UPSTREAM_MAX_BYTES: String(10 * 1024 * 1024) });
  await h.tenant('acme');
  return { h, auth: await h.auth('acme', ['*'], { rate_limit_per_minute: 100_000 }) };
}
