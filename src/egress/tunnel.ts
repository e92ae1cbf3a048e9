import type { Socket } from 'node:net';
import { Client } from 'undici';

/** The outbound proxy could not be reached, or would not open the tunnel; `cause` holds the network error if any. */
export class ProxyTunnelError extends Error {
  override name = 'ProxyTunnelError';
  readonly code = 'IX_PROXY_TUNNEL';
  /** The proxy's origin, without credentials: for the operator's logs, not for API answers. */
  readonly proxy: string;
  /** The proxy's answer to CONNECT, when it gave one other than 200. */
  readonly status?: number;

  constructor(proxy: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.proxy = proxy;
    this.status = options.status;
  }
}

/** `Proxy-Authorization` from the proxy URL's user information, as curl sends it. */
function proxyAuthorization(proxy: URL): Record<string, string> {
  if (proxy.username === '' && proxy.password === '') return {};
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return { 'proxy-authorization': `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/**
 * Opens a `CONNECT` tunnel through `proxy` to `authority` (`address:port`) and hands back its socket, on which the
 * caller speaks TLS or plain HTTP to the upstream. One short-lived client per tunnel: the socket leaves the client
 * when the proxy answers 200, and the keep-alive pool lives in the Agent above, per upstream origin.
 *
 * @example
 * const socket = await openTunnel(new URL('http://127.0.0.1:3128'), '93.184.216.34:443', 10_000);
 */
export async function openTunnel(proxy: URL, authority: string, timeoutMs: number): Promise<Socket> {
  const client = new Client(proxy.origin, { connect: { timeout: timeoutMs }, headersTimeout: timeoutMs });
  try {
    const { statusCode, socket } = await client.connect({
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
    });
    if (statusCode !== 200) {
      socket.destroy();
      throw new ProxyTunnelError(proxy.origin, `The outbound proxy did not open a tunnel (${statusCode}).`, {
        status: statusCode,
      });
    }
    return socket as Socket;
  } catch (err) {
    if (err instanceof ProxyTunnelError) throw err;
    const code = (err as { code?: unknown }).code;
    const detail = typeof code === 'string' ? ` (${code})` : '';
    throw new ProxyTunnelError(proxy.origin, `The outbound proxy could not be reached${detail}.`, { cause: err });
  } finally {
    void client.close();
  }
}
