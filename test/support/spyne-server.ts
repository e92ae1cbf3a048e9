import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type FixtureProcess, startFixtureProcess } from './fixture-process.ts';

/** Debian's Python, which has python3-spyne (.ci/run installs it); not a pyenv shim on PATH. */
export const debianPython = '/usr/bin/python3';
const fixtures = resolve(import.meta.dirname, './fixtures/spyne');

/** The spyne service's target namespace. */
export const spyneNamespace = 'http://example.com/spyne';

/**
 * Starts test/support/fixtures/spyne/service.py, a real Python SOAP 1.1 service (spyne 2.14 on wsgiref, one thread per
 * request), on 127.0.0.1 and resolves once its `?wsdl` answers. Its WSDL is `url('/?wsdl')`; calls are POSTed
 * to `url('/')`.
 *
 * @example const spyne = await startSpyneServer(); await fetch(spyne.url('/?wsdl')); … await spyne.close();
 */
export function startSpyneServer(): Promise<FixtureProcess> {
  return startFixtureProcess({
    name: 'the spyne service (python3-spyne)',
    command: debianPython,
    args: (port) => ['service.py', String(port)],
    cwd: fixtures,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
    readyPath: '/?wsdl',
  });
}

/** A call for test/support/fixtures/spyne/zeep_client.py: made by zeep, or (with `sent`) compared with the envelope another client sent. */
export interface ZeepCall {
  wsdl: string;
  operation: string;
  params: Record<string, unknown>;
  /** An envelope sent for the same call: zeep builds its own and compares the two Bodies instead of calling. */
  sent?: string;
}

/** A namespace-qualified XML tree: [tag in Clark notation, sorted attributes, stripped text, children]. */
export type XmlTree = [string, Array<[string, string]>, string, XmlTree[]];

export type ZeepAnswer =
  | { result: unknown }
  | { fault: { code: string; message: string } }
  | { same: boolean; zeep: XmlTree; sent: XmlTree };

/**
 * Runs `calls` through python-zeep, an independent SOAP client (one Python process for all of them), and returns
 * an answer per call, in order.
 *
 * @example const [answer] = await zeepCalls([{ wsdl: spyne.url('/?wsdl'), operation: 'Multiply', params: { a: 6, b: 7 } }]);
 */
export async function zeepCalls(calls: ZeepCall[]): Promise<ZeepAnswer[]> {
  const pending = promisify(execFile)(debianPython, [join(fixtures, 'zeep_client.py')], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    // A ceiling, not a bound: it includes Python importing zeep and lxml.
    timeout: 60_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  pending.child.stdin?.end(JSON.stringify(calls));
  const { stdout } = await pending;
  return JSON.parse(stdout) as ZeepAnswer[];
}
