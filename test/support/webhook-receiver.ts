import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got, and which of its secrets verified it (with the standardwebhooks package). */
export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The secrets that verified the request, as a receiver would check it: `new Webhook(secret).verify(body, headers)`. */
  verifiedWith: string[];
  /** The body, parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the payload by shape and assert on the values.
  payload: any;
}

/** What the receiver answers a request: a status, or `hang` (it never answers). */
export type ReceiverAnswer = number | 'hang';

/**
 * A webhook receiver as a tenant would run one: a real HTTP server that verifies every request with the
 * standardwebhooks package against each secret in `secrets`, and answers with the next of `answers` (200 once they
 * are used up, or `otherwise`).
 */
export interface WebhookReceiver {
  url: string;
  received: Received[];
  secrets: string[];
  answers: ReceiverAnswer[];
  otherwise: ReceiverAnswer;
  /** The body of every answer; unset: `ok` for a 2xx, `no` otherwise. */
  answerBody?: string | Buffer;
  close(): Promise<void>;
}

/** The headers standardwebhooks reads, as one string each. */
export function verificationHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  };
}

/** Whether `secret` verifies `body` under `headers` (standardwebhooks throws when it does not). */
export function verifies(secret: string, body: string, headers: IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, verificationHeaders(headers));
    return true;
  } catch {
    return false;
  }
}

export async function startReceiver(secrets: string[] = []): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    secrets,
    answers: [],
    otherwise: 200,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        payload = undefined;
      }
      const verifiedWith = receiver.secrets.filter((secret) => verifies(secret, body, req.headers));
      receiver.received.push({ headers: req.headers, body, verifiedWith, payload });
      const answer = receiver.answers.shift() ?? receiver.otherwise;
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(receiver.answerBody ?? (answer < 300 ? 'ok' : 'no'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
