import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { type FixtureProcess, startFixtureProcess } from './fixture-process.ts';

const source = resolve(import.meta.dirname, './fixtures/jaxws/Files.java');

/**
 * The JAX-WS reference implementation and what it needs at run time, as Debian's libjaxws-java installs them in
 * /usr/share/java (.ci/run installs it with default-jdk-headless).
 */
const jars = [
  'jaxws-rt',
  'jaxws-api',
  'jws-api',
  'jaxb-api',
  'jaxb-runtime',
  'jaxb-core',
  'jaxb-impl',
  'javax.activation',
  'saaj-impl',
  'mimepull',
  'istack-commons-runtime',
  'metro-policy',
  'gmbal',
  'glassfish-management-api',
  'stax-ex',
  'streambuffer',
  'stax2-api',
  'woodstox-core',
].map((name) => `/usr/share/java/${name}.jar`);

/** The target namespace of the JAX-WS fixture service. */
export const filesNamespace = 'http://example.com/files';

/**
 * Compiles test/support/fixtures/jaxws/Files.java into a temporary folder and runs it on 127.0.0.1: a JAX-WS (Metro) service
 * that answers MTOM. Its WSDL is `url('/files?wsdl')`.
 *
 * @example const jaxws = await startJaxwsFilesServer(); … await jaxws.close();
 */
export async function startJaxwsFilesServer(): Promise<FixtureProcess> {
  const missing = jars.filter((jar) => !existsSync(jar));
  if (missing.length > 0) {
    throw new Error(`the JAX-WS runtime is not installed (apt-get install libjaxws-java): missing ${missing.join(', ')}`);
  }
  const classpath = jars.join(':');
  const out = mkdtempSync(join(tmpdir(), 'ix-jaxws-'));
  await promisify(execFile)('javac', ['-cp', classpath, '-d', out, source]);
  return startFixtureProcess({
    name: 'the JAX-WS service (libjaxws-java)',
    command: 'java',
    args: (port) => ['-cp', `${classpath}:${out}`, 'Files', String(port)],
    cwd: out,
    readyPath: '/files?wsdl',
  });
}
