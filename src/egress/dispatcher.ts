import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { EgressPolicy } from './policy.ts';
import { type ProxySettings, proxyFor } from './proxy-env.ts';
import type { TlsConnectOptions } from './tls.ts';
import { keepTlsAlert } from './tls-alerts.ts';
import { openTunnel } from './tunnel.ts';

/** A connection refused by the egress policy, before any packet was sent to the address. */
export class EgressDeniedError extends Error {
  override name = 'EgressDeniedError';
  readonly code = 'IX_EGRESS_DENIED';
  /** The host name (or IP literal) the request was for. */
  readonly host: string;
  /** The refused address the host resolved to. */
  readonly address: string;
  /** Why the policy refused it. */
  readonly reason: string;

  constructor(host: string, address: string, reason: string) {
    super(`Connecting to ${host} (${address}) is refused by the egress policy: ${reason}.`);
    this.host = host;
    this.address = address;
    this.reason = reason;
  }
}

/** Resolves a host name to every address, as `dns.lookup` with `all: true` does. */
export type Resolver = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>;

export interface EgressDispatcherOptions {
  /** Longest wait for a TCP (and TLS) connection to open; default 10 s. A request's own deadline may end it sooner. */
  readonly connectTimeoutMs?: number;
  /** Host name resolution; default `dns.lookup`. Tests replace it to stage DNS rebinding. */
  readonly resolve?: Resolver;
  /** An integration's `config.tls` as connect options (connectOptions); default: the system's roots, no client certificate. */
  readonly tls?: TlsConnectOptions;
  /** Outbound proxies (proxySettingsFromEnv); default: every connection goes direct. */
  readonly proxies?: ProxySettings;
}

const systemResolver: Resolver = (hostname, options) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, options, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/**
 * Every address of the host, or the policy's refusal when any of them is refused: one refused address refuses the
 * host, whichever address the socket would have picked.
 */
async function resolveChecked(policy: EgressPolicy, resolve: Resolver, hostname: string, options: LookupOptions) {
  const addresses = await resolve(hostname, { ...options, all: true });
  for (const { address } of addresses) {
    const decision = policy.check(address);
    if (!decision.allowed) throw new EgressDeniedError(hostname, address, decision.reason);
  }
  if (addresses.length === 0) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  }
  return addresses;
}

/**
 * A `lookup` for net/tls.connect that refuses the connection when any address of the host is
 * refused: the check is made on the addresses the socket is about to use, at connect time, so a
 * host that re-resolves to a forbidden address later (DNS rebinding) is caught too.
 */
function checkedLookup(policy: EgressPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveChecked(policy, resolve, hostname, options).then(
      (addresses) => {
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/** The address a connection to `hostname` may use: an IP literal as itself, a name as its first resolved address. */
async function admittedAddress(policy: EgressPolicy, resolve: Resolver, hostname: string): Promise<string> {
  if (isIP(hostname) === 0) return (await resolveChecked(policy, resolve, hostname, {}))[0].address;
  const decision = policy.check(hostname);
  if (!decision.allowed) throw new EgressDeniedError(hostname, hostname, decision.reason);
  return hostname;
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

/**
 * The undici dispatcher every connector sends through: keep-alive pools per origin (an undici
 * Agent) whose connections are opened only to addresses the egress policy admits. Host names are
 * checked in the socket's DNS lookup; IP-literal hosts, for which Node skips the lookup, are
 * checked before connecting. With `tls`, every connection uses the integration's roots, client
 * certificate and name. With `proxies`, a proxied connection's host is resolved and judged here,
 * then reached through a CONNECT tunnel to the judged address; the proxy itself is the operator's
 * choice and is not judged.
 *
 * @example
 * const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: false }));
 * await request('http://169.254.169.254/', { dispatcher }); // rejects with EgressDeniedError
 */
export function createEgressDispatcher(policy: EgressPolicy, options: EgressDispatcherOptions = {}): Agent {
  const timeout = options.connectTimeoutMs ?? 10_000;
  const resolve = options.resolve ?? systemResolver;
  const connector = buildConnector({ ...options.tls, timeout, lookup: checkedLookup(policy, resolve) });
  const connect: buildConnector.connector = (connectOptions, connected) => {
    const callback = ((err: Error | null, socket: Socket | null) => {
      if (socket && connectOptions.protocol === 'https:') keepTlsAlert(socket);
      (connected as (err: Error | null, socket: Socket | null) => void)(err, socket);
    }) as buildConnector.Callback;
    const hostname = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    // The configured name wins over one undici takes from a Host header: it is the name the integration verifies.
    const target = { ...connectOptions, servername: options.tls?.servername ?? connectOptions.servername };
    const proxy = options.proxies && proxyFor(options.proxies, target.protocol, hostname, Number(target.port));
    if (proxy) {
      // Judged before the proxy is asked, and the tunnel goes to the judged address (not the name, which the proxy
      // would resolve again): a name that rebinds between the two lookups can not reach a refused address.
      const port = target.port || DEFAULT_PORTS[target.protocol];
      admittedAddress(policy, resolve, hostname)
        .then((address) => openTunnel(proxy, `${isIP(address) === 6 ? `[${address}]` : address}:${port}`, timeout))
        .then(
          (socket) => {
            if (target.protocol !== 'https:') return callback(null, socket);
            // TLS to the upstream inside the tunnel, with the integration's options and the upstream's own name.
            connector(
              { ...target, servername: target.servername ?? (isIP(hostname) ? undefined : hostname), httpSocket: socket },
              callback,
            );
          },
          (err: Error) => callback(err, null),
        );
      return;
    }
    if (isIP(hostname) !== 0) {
      const decision = policy.check(hostname);
      if (!decision.allowed) {
        const error = new EgressDeniedError(hostname, hostname, decision.reason);
        process.nextTick(() => callback(error, null));
        return;
      }
    }
    connector(target, callback);
  };
  return new Agent({ connect });
}
