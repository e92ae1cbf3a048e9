import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { EgressPolicy } from './policy.ts';

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
}

const systemResolver: Resolver = (hostname, options) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, options, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });

/**
 * A `lookup` for net/tls.connect that refuses the connection when any address of the host is
 * refused: the check is made on the addresses the socket is about to use, at connect time, so a
 * host that re-resolves to a forbidden address later (DNS rebinding) is caught too.
 */
function checkedLookup(policy: EgressPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }).then(
      (addresses) => {
        for (const { address } of addresses) {
          const decision = policy.check(address);
          if (!decision.allowed) return callback(new EgressDeniedError(hostname, address, decision.reason), '');
        }
        if (addresses.length === 0) {
          return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
        }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * The undici dispatcher every connector sends through: keep-alive pools per origin (an undici
 * Agent) whose connections are opened only to addresses the egress policy admits. Host names are
 * checked in the socket's DNS lookup; IP-literal hosts, for which Node skips the lookup, are
 * checked before connecting.
 *
 * @example
 * const dispatcher = createEgressDispatcher(createEgressPolicy({ allowPrivate: false }));
 * await request('http://169.254.169.254/', { dispatcher }); // rejects with EgressDeniedError
 */
export function createEgressDispatcher(policy: EgressPolicy, options: EgressDispatcherOptions = {}): Agent {
  const connector = buildConnector({
    timeout: options.connectTimeoutMs ?? 10_000,
    lookup: checkedLookup(policy, options.resolve ?? systemResolver),
  });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const hostname = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(hostname) !== 0) {
      const decision = policy.check(hostname);
      if (!decision.allowed) {
        const error = new EgressDeniedError(hostname, hostname, decision.reason);
        process.nextTick(() => callback(error, null));
        return;
      }
    }
    connector(connectOptions, callback);
  };
  return new Agent({ connect });
}
