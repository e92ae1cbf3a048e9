/** One entry of NO_PROXY: a host (or domain suffix) and, when given, a port. */
interface NoProxyEntry {
  readonly host: string;
  /** 0: any port. */
  readonly port: number;
}

/** The outbound proxies of the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), read once. */
export interface ProxySettings {
  /** Proxy for https upstreams. */
  readonly httpsProxy?: URL;
  /** Proxy for http upstreams. */
  readonly httpProxy?: URL;
  /** NO_PROXY is `*`: nothing is proxied. */
  readonly bypassAll: boolean;
  readonly noProxy: readonly NoProxyEntry[];
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The first non-empty of the lower-case and the upper-case variable (lower case first, as curl and undici read it). */
function variable(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return [env[name.toLowerCase()], env[name.toUpperCase()]].map((value) => value?.trim()).find(Boolean);
}

/** A proxy URL; a bare `host:port` means http://host:port, as curl reads it. */
function proxyUrl(name: string, value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  const url = URL.parse(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`${name} is not an http:// or https:// proxy URL`);
  }
  return url;
}

/** A host without IPv6 brackets or a trailing dot, lower-cased. */
function bareHost(host: string): string {
  return host
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

function parseNoProxyEntry(text: string): NoProxyEntry {
  // `host:port` and `[v6]:port`; an unbracketed IPv6 address (`::1`) has no port.
  const withPort = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(text);
  const host = withPort ? withPort[1] : text;
  // `.example.com` and `*.example.com` mean example.com's subdomains, which the suffix match covers anyway.
  return { host: bareHost(host.replace(/^\*?\./, '')), port: withPort ? Number(withPort[2]) : 0 };
}

/**
 * The proxies of `env`: `https_proxy`/`HTTPS_PROXY` for https upstreams, `http_proxy`/`HTTP_PROXY` for http ones
 * (an https upstream never falls back to HTTP_PROXY, as in curl and Go), `no_proxy`/`NO_PROXY` a list of hosts,
 * domain suffixes and `host:port` entries that go direct, or `*` for all. Loopback is not special: it is proxied
 * unless NO_PROXY names it (docs/security.md#outbound-proxies). Throws TypeError on a proxy URL that is not http(s).
 *
 * @example
 * proxySettingsFromEnv({ HTTPS_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'localhost,.internal' });
 */
export function proxySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): ProxySettings {
  const noProxy = variable(env, 'no_proxy') ?? '';
  const entries = noProxy.split(/[\s,]+/).filter(Boolean);
  return {
    httpsProxy: proxyUrl('HTTPS_PROXY', variable(env, 'https_proxy')),
    httpProxy: proxyUrl('HTTP_PROXY', variable(env, 'http_proxy')),
    bypassAll: entries.includes('*'),
    noProxy: entries.filter((entry) => entry !== '*').map(parseNoProxyEntry),
  };
}

/**
 * The proxy an upstream connection goes through, or undefined to go direct: by the URL scheme, unless NO_PROXY names
 * the host itself or a domain it is in (`example.com` covers `api.example.com`), with the port when the entry has one.
 */
export function proxyFor(settings: ProxySettings, protocol: string, hostname: string, port?: number): URL | undefined {
  const proxy = protocol === 'https:' ? settings.httpsProxy : protocol === 'http:' ? settings.httpProxy : undefined;
  if (proxy === undefined || settings.bypassAll) return undefined;
  const host = bareHost(hostname);
  const effectivePort = port || DEFAULT_PORTS[protocol] || 0;
  const bypassed = settings.noProxy.some(
    (entry) => (entry.port === 0 || entry.port === effectivePort) && (host === entry.host || host.endsWith(`.${entry.host}`)),
  );
  return bypassed ? undefined : proxy;
}
