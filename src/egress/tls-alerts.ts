import type { Socket } from 'node:net';

/**
 * Keeps a TLS alert that arrives after the handshake as the cause of the error undici reports instead.
 *
 * A TLS 1.3 server checks the client certificate after the client has finished its side of the handshake, so its
 * refusal (`certificate required`, `unknown CA`) arrives while undici is waiting for the answer; undici records that
 * error, then the close that follows replaces it with `other side closed`. The alert is what says which config field
 * to fix (src/transport/tls-failures.ts), so it becomes that later error's `cause`.
 */
export function keepTlsAlert(socket: Socket): void {
  let alert: Error | undefined;
  // Prepended: the cause must be set before undici's own listener records the error and fails the request.
  socket.prependListener('error', (err: Error & { code?: unknown }) => {
    if (alert === undefined) {
      if (typeof err.code === 'string' && err.code.startsWith('ERR_SSL_')) alert = err;
    } else if (err !== alert && err.cause === undefined) {
      err.cause = alert;
    }
  });
}
