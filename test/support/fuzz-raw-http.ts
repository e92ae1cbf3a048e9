import { connect } from 'node:net';
import fc from 'fast-check';

/**
 * Requests as bytes on a socket, for what `app.inject()` cannot send: control bytes in the request line and
 * headers, bare LF, obs-fold, conflicting Content-Length / Transfer-Encoding, bad chunk sizes, oversized headers.
 */
export interface RawHttpRequest {
  method: string;
  target: string;
  version: string;
  headers: Array<[string, string]>;
  eol: '\r\n' | '\n';
  body: string;
}

const valid = { 'x-api-key': 'KEY', 'x-tenant-id': 'acme', 'content-type': 'application/json' };

export const rawHttpRequests: fc.Arbitrary<RawHttpRequest> = fc.record({
  method: fc.oneof(
    { arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE'), weight: 8 },
    { arbitrary: fc.constantFrom('G\u0000T', 'GET GET', '', 'get', 'PRI', 'CONNECT', 'ÿ'), weight: 1 },
  ),
  target: fc.oneof(
    {
      arbitrary: fc.constantFrom(
        '/healthz',
        '/api/v1/me',
        '/api/v1/entities',
        '/api/v1/entities/e1',
        '/api/v1/integrations/gql-ok/execute',
      ),
      weight: 6,
    },
    {
      arbitrary: fc.constantFrom(
        '/api/v1/entities/a b',
        '/api/v1/entities/\u0000',
        '/api/v1/entities/\u007f',
        '/api/v1/entities/é',
        '/api/v1/entities/%',
        '*',
        'http://evil.example/healthz',
        '//api/v1/me',
        '',
        `/api/v1/entities/${'a'.repeat(9000)}`,
      ),
      weight: 2,
    },
  ),
  version: fc.oneof(
    { arbitrary: fc.constant('HTTP/1.1'), weight: 8 },
    { arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'HTTP/9', ''), weight: 1 },
  ),
  headers: fc.array(
    fc.oneof(
      { arbitrary: fc.constantFrom(...Object.entries(valid)), weight: 6 },
      {
        arbitrary: fc.constantFrom<[string, string]>(
          ['x-api-key', 'a\u0000b'],
          ['x-tenant-id', 'ac\u0001me'],
          ['x-request-id', 'id\u007f'],
          ['x-request-id', 'é'],
          ['X Bad', 'v'],
          ['x-bad\u0000', 'v'],
          ['', 'v'],
          ['x-folded', 'a\r\n b'],
          ['x-cr', 'a\rb'],
          ['content-length', '-1'],
          ['content-length', '1, 2'],
          ['content-length', '99999999999999999999'],
          ['content-length', 'abc'],
          ['transfer-encoding', 'chunked'],
          ['transfer-encoding', 'gzip, chunked'],
          ['transfer-encoding', 'chunked, identity'],
          ['content-type', 'application/json; charset=utf-16'],
          ['idempotency-key', 'k'.repeat(300)],
          ['x-big', 'b'.repeat(20_000)],
          ['upgrade', 'websocket'],
          ['connection', 'upgrade'],
          ['expect', '100-continue'],
        ),
        weight: 2,
      },
    ),
    { maxLength: 6 },
  ),
  eol: fc.oneof({ arbitrary: fc.constant('\r\n' as const), weight: 5 }, { arbitrary: fc.constant('\n' as const), weight: 1 }),
  body: fc.constantFrom(
    '',
    '{"name":"x"}',
    '{"operation":"test"}',
    '5\r\n{"a":\r\n0\r\n\r\n',
    'zz\r\n{}\r\n0\r\n\r\n',
    '{',
    '\u0000',
  ),
});

/** The request's bytes with the real key in place of KEY; a Content-Length is added when none was generated. */
export function rawHttpBytes(request: RawHttpRequest, key: string): Buffer {
  const body = Buffer.from(request.body, 'latin1');
  const headers = request.headers.map(([name, value]): [string, string] => [name, value === 'KEY' ? key : value]);
  const named = (name: string) => headers.some(([n]) => n.toLowerCase() === name);
  if (!named('content-length') && !named('transfer-encoding')) headers.push(['content-length', String(body.length)]);
  if (!named('host')) headers.unshift(['host', '127.0.0.1']);
  const head = [`${request.method} ${request.target} ${request.version}`, ...headers.map(([n, v]) => `${n}: ${v}`), '', ''].join(
    request.eol,
  );
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes the bytes and reads the first response (1xx skipped). A request the server is still waiting on gets a
 * half-close after `patienceMs` (the end of its input, which the parser must then judge); a client that half-closes
 * at once would be treated as gone by Node and get no answer at all. Undefined when the server closed the
 * connection without a word, or said nothing within `waitMs`.
 */
export function sendRaw(port: number, bytes: Buffer, patienceMs = 300, waitMs = 3000): Promise<RawAnswer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const finish = () => {
      clearTimeout(patience);
      clearTimeout(timer);
      socket.destroy();
      resolve(parseFirstResponse(Buffer.concat(chunks).toString('latin1')));
    };
    const patience = setTimeout(() => socket.end(), patienceMs);
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (parseFirstResponse(Buffer.concat(chunks).toString('latin1'))) finish();
    });
    socket.on('error', () => {});
    socket.on('close', finish);
  });
}

function parseFirstResponse(text: string): RawAnswer | undefined {
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
    if (!status) return undefined;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const after = rest.slice(end + 4);
    if (status >= 100 && status < 200) {
      rest = after;
      continue;
    }
    const bytes = Buffer.from(after, 'latin1');
    const length = Number(headers['content-length'] ?? bytes.length);
    if (bytes.length < length) return undefined;
    return { status, headers, body: bytes.subarray(0, length).toString('utf8') };
  }
}
