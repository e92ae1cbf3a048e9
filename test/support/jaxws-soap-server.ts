import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type FixtureProcess, startFixtureProcess } from './fixture-process.ts';

const fixtures = resolve(import.meta.dirname, './fixtures/soap');

/** The JAX-WS-style order service's target namespace. */
export const jaxwsNamespace = 'http://ws.example.com/orders/';

/** One SOAP request as the router saw it (a `type`, so that it is a `Record<string, unknown>`). */
export type JaxwsPost = {
  /** The SOAPAction header as received (quotes included), `null` when absent. */
  soapAction: string | null;
  body: string;
};

/** The JAX-WS-style order service behind PHP's SoapServer, and the SOAP requests it received. */
export interface JaxwsSoapServer extends FixtureProcess {
  /** The POSTs received so far, in order. */
  posts(): JaxwsPost[];
  /** Forgets the POSTs received so far. */
  clearLog(): void;
}

/**
 * Starts `php -S` with test/support/fixtures/soap/jaxws-router.php: jaxws-orders.wsdl (`url('/orders?wsdl')`, importing
 * jaxws-common.xsd) answered by PHP's SoapServer in WSDL mode on `url('/orders')`.
 *
 * @example const jaxws = await startJaxwsSoapServer(); await fetch(jaxws.url('/orders?wsdl')); … await jaxws.close();
 */
export async function startJaxwsSoapServer(): Promise<JaxwsSoapServer> {
  const logDir = mkdtempSync(join(tmpdir(), 'ix-jaxws-'));
  const logFile = join(logDir, 'posts.jsonl');
  try {
    const server = await startFixtureProcess({
      name: 'php -S jaxws-router.php (php-cli, php-soap)',
      command: 'php',
      args: (port) => [
        '-d',
        'soap.wsdl_cache_enabled=0',
        '-d',
        'display_errors=stderr',
        '-S',
        `127.0.0.1:${port}`,
        'jaxws-router.php',
      ],
      cwd: fixtures,
      env: { ...process.env, JAXWS_LOG_FILE: logFile },
      readyPath: '/__ready',
    });
    return {
      ...server,
      posts: () =>
        existsSync(logFile)
          ? readFileSync(logFile, 'utf8')
              .split('\n')
              .filter((line) => line !== '')
              .map((line) => JSON.parse(line) as JaxwsPost)
          : [],
      clearLog: () => writeFileSync(logFile, ''),
      async close() {
        await server.close();
        rmSync(logDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(logDir, { recursive: true, force: true });
    throw error;
  }
}
