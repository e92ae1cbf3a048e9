import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket } from 'node:tls';

/**
 * A misbehaving upstream on 127.0.0.1 that plays a script, one behaviour per TCP connection, and counts what reached
 * it. Every answer says `connection: close`, so each connection carries exactly one request: a behaviour that acts at
 * accept (`reset-on-accept`) meets the very request it was meant for, and the script's n-th step is the n-th attempt.
 */

/** An HTTP answer, sent once the whole request was read. */
export interface Answer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/**
 * - an `Answer`;
 * - `throttled`: 429 with `Retry-After: 1`; `unavailable`: 503;
 * - `reset-after-read`: reads the whole request, then resets the connection (RST) without answering;
 * - `reset-on-accept`: resets the connection as soon as it is accepted, before reading a byte;
 * - `hang`: reads the request and never answers (until `close()`).
 */
export type Behaviour = Answer | 'throttled' | 'unavailable' | 'reset-after-read' | 'reset-on-accept' | 'hang';

/** Behaviours for connections 0, 1, 2…; past the end of a list its last one repeats. */
export type Script = readonly Behaviour[] | ((connection: number) => Behaviour);

export interface ScriptedUpstream {
  /** `http://127.0.0.1:PORT` (`https://` with `tls`). */
  readonly url: string;
  readonly port: number;
  /** TCP connections accepted. */
  readonly connections: number;
  /** Requests read whole, headers and body. */
  readonly requests: number;
  /** The bodies of the requests read whole, in order. */
  readonly bodies: readonly string[];
  /** The behaviour given to each accepted connection, in order. */
  readonly played: readonly Behaviour[];
  close(): Promise<void>;
}

export interface ScriptedUpstreamOptions {
  /** A port to listen on (reservedPort); a free one by default. */
  readonly port?: number;
  /** Serve HTTPS with this certificate. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

export const ok: Answer = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":{"ok":true}}' };

/**
 * A script whose first `n` connections get `failure` and every later one `success`.
 *
 * @example
 * const upstream = await scriptedUpstream(failNThenSucceed(2, 'unavailable'));
 */
export function failNThenSucceed(n: number, failure: Behaviour, success: Behaviour = ok): Script {
  return (connection) => (connection < n ? failure : success);
}

function stepOf(script: Script, connection: number): Behaviour {
  if (typeof script === 'function') return script(connection);
  if (script.length === 0) throw new Error('scriptedUpstream: the script is empty');
  return script[Math.min(connection, script.length - 1)];
}

function answerOf(behaviour: 'throttled' | 'unavailable' | Answer): Answer {
  if (behaviour === 'throttled') return { status: 429, headers: { 'retry-after': '1' }, body: '{"error":"throttled"}' };
  if (behaviour === 'unavailable') return { status: 503, body: '{"error":"unavailable"}' };
  return behaviour;
}

/** One accepted connection: its raw TCP socket (to reset) and what it plays. */
interface Served {
  readonly raw: Socket;
  readonly behaviour: Behaviour;
}

/**
 * Starts an upstream that plays `script` (see Behaviour), on a free port of 127.0.0.1 or `options.port`.
 *
 * @example
 * const upstream = await scriptedUpstream(['reset-after-read', ok]);
 * // …two attempts later: upstream.requests === 2, upstream.connections === 2
 */
export async function scriptedUpstream(script: Script, options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
  const counts = { connections: 0, requests: 0 };
  const bodies: string[] = [];
  const played: Behaviour[] = [];
  const raws = new Set<Socket>();
  // What each HTTP-level socket (the raw one, or the TLS socket over it) plays.
  const served = new WeakMap<Socket, Served>();
  const secureContext = options.tls ? createSecureContext({ cert: options.tls.cert, key: options.tls.key }) : undefined;

  const http = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the client went away mid-request: nothing was read whole
    }
    counts.requests++;
    bodies.push(Buffer.concat(chunks).toString('utf8'));
    res.on('error', () => {});
    const connection = served.get(req.socket as Socket);
    const behaviour = connection?.behaviour ?? ok;
    if (behaviour === 'hang') return;
    if (behaviour === 'reset-after-read' || behaviour === 'reset-on-accept') {
      connection?.raw.resetAndDestroy();
      return;
    }
    const answer = answerOf(behaviour);
    res.writeHead(answer.status, { ...answer.headers, connection: 'close' }).end(answer.body ?? '');
  });
  http.on('clientError', (_err, socket) => socket.destroy());

  const front: Server = createTcpServer((raw) => {
    const behaviour = stepOf(script, counts.connections++);
    played.push(behaviour);
    raws.add(raw);
    raw.on('close', () => raws.delete(raw));
    raw.on('error', () => {});
    if (behaviour === 'reset-on-accept') {
      raw.resetAndDestroy();
      return;
    }
    const socket = secureContext ? new TLSSocket(raw, { isServer: true, secureContext }) : raw;
    socket.on('error', () => {});
    served.set(socket, { raw, behaviour });
    http.emit('connection', socket);
  });
  await new Promise<void>((resolve, reject) => {
    front.once('error', reject);
    front.listen(options.port ?? 0, '127.0.0.1', () => {
      front.off('error', reject);
      resolve();
    });
  });
  const port = (front.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    get connections() {
      return counts.connections;
    },
    get requests() {
      return counts.requests;
    },
    bodies,
    played,
    close: () => {
      for (const raw of raws) raw.destroy();
      http.close();
      return new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

/** A port of 127.0.0.1 that nothing listens on yet, and can be opened later. */
export interface ReservedPort {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** Starts listening on the port with `script` (scriptedUpstream). */
  open(script: Script, options?: Omit<ScriptedUpstreamOptions, 'port'>): Promise<ScriptedUpstream>;
}

/**
 * A free port, bound a moment to learn it and closed again: a connection to it is refused until `open`. (Another
 * process could take the port in between; on a test machine's ephemeral range that is rare enough to accept.)
 *
 * @example
 * const later = await reservedPort();
 * // …a request to later.url is refused…
 * const upstream = await later.open([ok]);
 */
export async function reservedPort(): Promise<ReservedPort> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    open: (script, options = {}) => scriptedUpstream(script, { ...options, port }),
  };
}
