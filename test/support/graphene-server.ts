import { request } from 'node:http';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { startFixtureProcess } from './fixture-process.ts';
import { type CountingGraphqlServer, type ForwardRequest, type RealisticServerOptions, serveCounting } from './yoga-server.ts';

/** Debian's Python, which has python3-graphene (.ci/run installs it); not a pyenv shim on PATH. */
const debianPython = '/usr/bin/python3';
const fixtures = resolve(import.meta.dirname, './fixtures/graphene');

/**
 * Starts test/support/fixtures/graphene/server.py: test/support/fixtures/graphql-realistic/schema.graphql written with graphene 2.1.9
 * (graphql-core 2), served by Python's http.server, one thread per request. The tests reach it through a front in
 * this process that counts the requests and forwards them unchanged, so `url` is the front's.
 *
 * Its answers are graphene's (see server.py): status 400 for a document that does not execute (syntax, validation,
 * variables), 200 otherwise; with `introspection: false`, `__schema` and `__type` fail validation with
 * "GraphQL introspection is not allowed".
 *
 * @example const graphene = await startGrapheneServer({ introspection: false }); await fetch(graphene.url, …); graphene.requests; await graphene.close();
 */
export async function startGrapheneServer(options: RealisticServerOptions = {}): Promise<CountingGraphqlServer> {
  const python = await startFixtureProcess({
    name: 'the graphene server (python3-graphene)',
    command: debianPython,
    args: (port) => ['server.py', String(port), ...(options.introspection === false ? ['--no-introspection'] : [])],
    cwd: fixtures,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
    readyPath: '/graphql?query=%7B__typename%7D',
  });
  try {
    return await serveCounting(forwardTo(Number(new URL(python.origin).port)), python.close);
  } catch (error) {
    await python.close();
    throw error;
  }
}

/** Forwards a request to the Python server at `port` and its answer back, status and headers included. */
function forwardTo(port: number): ForwardRequest {
  return (req, body, res) =>
    new Promise((done, failed) => {
      const headers = { ...req.headers, host: `127.0.0.1:${port}`, 'content-length': String(body.length) };
      // Hop-by-hop: the body is forwarded whole, on a connection of its own.
      delete headers.connection;
      delete headers['transfer-encoding'];
      const upstream = request(
        { host: '127.0.0.1', port, method: req.method, path: req.url, headers, agent: false },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          pipeline(answer, res).then(done, failed);
        },
      );
      upstream.once('error', failed);
      upstream.end(body);
    });
}
