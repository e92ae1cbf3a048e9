import { isIP } from 'node:net';

/** The egress settings of docs/security.md#egress-policy (IX_EGRESS_ALLOW_PRIVATE, IX_EGRESS_ALLOW, IX_EGRESS_DENY). */
export interface EgressPolicyOptions {
  /** Private and loopback ranges may be reached. */
  readonly allowPrivate: boolean;
  /** CIDRs (or bare addresses) admitted even when private ranges are refused. */
  readonly allow?: readonly string[];
  /** CIDRs (or bare addresses) always refused. */
  readonly deny?: readonly string[];
}

export type EgressDecision = { allowed: true } | { allowed: false; reason: string };

export interface EgressPolicy {
  /** Decides whether a connection to this IP address (v4 or v6, no port) may be made. */
  check(address: string): EgressDecision;
}

/**
 * An address as a 128-bit number. An IPv4 address is held as its IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`), so `10.0.0.1` and `::ffff:10.0.0.1` are one value and an IPv4 rule
 * `a.b.c.d/n` is the IPv6 rule `::ffff:a.b.c.d/(96 + n)`, as Node's BlockList treats them.
 */
type Address = bigint;

interface Cidr {
  readonly network: Address;
  readonly prefix: number;
}

const LOW_32 = 0xffff_ffffn;
const MAPPED = 0xffff_0000_0000n;

/** An IP address (v4 or v6, no brackets or zone) as a number; undefined when it is not one. */
function parseAddress(text: string): Address | undefined {
  const family = isIP(text);
  if (family === 4) return MAPPED | text.split('.').reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
  if (family !== 6 || text.includes('%')) return undefined;
  const [head, tail, extra] = canonicalIPv6(text).split('::');
  if (extra !== undefined) return undefined;
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  // `::` stands for as many zero hextets as make eight.
  const zeros = tail === undefined ? 0 : Math.max(0, 8 - front.length - back.length);
  const hextets = [...front, ...Array<string>(zeros).fill('0'), ...back];
  if (hextets.length !== 8 || !hextets.every((hextet) => /^[0-9a-f]{1,4}$/.test(hextet))) return undefined;
  return hextets.reduce((value, hextet) => (value << 16n) | BigInt(`0x${hextet}`), 0n);
}

/** An IPv4 address held as a number, in dotted form. */
function formatIPv4(address: Address): string {
  return [24n, 16n, 8n, 0n].map((shift) => (address >> shift) & 0xffn).join('.');
}

/** Parses a CIDR; a bare address is /32 or /128. Throws on anything else. */
function parseCidr(cidr: string): Cidr {
  const [text, prefixText, extra] = cidr.trim().split('/');
  const address = parseAddress(text);
  if (address === undefined || extra !== undefined || (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText))) {
    throw new TypeError(`egress policy: "${cidr}" is not an address or CIDR`);
  }
  const ipv4 = isIP(text) === 4;
  const bits = prefixText === undefined ? (ipv4 ? 32 : 128) : Number(prefixText);
  if (bits > (ipv4 ? 32 : 128)) throw new TypeError(`egress policy: "${cidr}" has a prefix that is too long`);
  const prefix = ipv4 ? 96 + bits : bits;
  return { network: address & ~((1n << BigInt(128 - prefix)) - 1n), prefix };
}

/**
 * Whether `text` is an address or a CIDR this policy reads (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`): what loadConfig
 * checks IX_EGRESS_ALLOW, IX_EGRESS_DENY and IX_TRUST_PROXY's addresses with, so that a list it accepts never fails later.
 */
export function isCidr(text: string): boolean {
  try {
    parseCidr(text);
    return true;
  } catch {
    return false;
  }
}

function inCidr(address: Address, { network, prefix }: Cidr): boolean {
  return address >> BigInt(128 - prefix) === network >> BigInt(128 - prefix);
}

/**
 * Refused whatever the configuration says: link-local and cloud metadata, and the ranges where no upstream can answer
 * a request at all (multicast, the reserved 240.0.0.0/4 with the broadcast address, IPv6's discard-only prefix).
 */
const ALWAYS_REFUSED = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254', '224.0.0.0/4', '240.0.0.0/4', 'ff00::/8', '100::/64'].map(
  parseCidr,
);

/**
 * Refused when `allowPrivate` is false: private, loopback, CGNAT and unspecified ranges, and the benchmarking and
 * documentation ranges, which no public service lives in (a lab network may use them; IX_EGRESS_ALLOW names them).
 */
const PRIVATE = [
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  '127.0.0.0/8',
  '100.64.0.0/10',
  '0.0.0.0/8',
  '::1',
  '::',
  'fc00::/7',
  'fec0::/10',
  '198.18.0.0/15',
  '192.0.2.0/24',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '2001:db8::/32',
].map(parseCidr);

/** Addresses the kernel treats as loopback: a connection to `0.0.0.0` or `::` goes to the host itself. */
const LOOPBACK_EQUIVALENT = parseCidr('0.0.0.0/8');
const LOOPBACK = parseAddress('127.0.0.1')!;

/**
 * The IPv6 prefixes that carry an IPv4 address, and where: IPv4-compatible (`::` and `::1` among
 * them), SIIT's IPv4-translated form (`::ffff:0:a.b.c.d`, RFC 2765), NAT64 well-known and local-use
 * (RFC 8215), 6to4, and Teredo (server in bits 32..63, client in the last 32 bits XOR 0xffffffff).
 * The IPv4-mapped form needs no entry: it is IPv4.
 */
const EMBEDDINGS: readonly (readonly [Cidr, (address: Address) => Address[]])[] = [
  [parseCidr('::/96'), (a) => [a & LOW_32]],
  [parseCidr('::ffff:0:0:0/96'), (a) => [a & LOW_32]],
  [parseCidr('64:ff9b::/96'), (a) => [a & LOW_32]],
  [parseCidr('64:ff9b:1::/48'), (a) => [a & LOW_32]],
  [parseCidr('2002::/16'), (a) => [(a >> 80n) & LOW_32]],
  [parseCidr('2001::/32'), (a) => [(a >> 64n) & LOW_32, (a & LOW_32) ^ LOW_32]],
];

/** The address itself and every IPv4 address it embeds (held as mapped addresses). */
function embeddedForms(address: Address): Address[] {
  const embedded = EMBEDDINGS.flatMap(([prefix, extract]) => (inCidr(address, prefix) ? extract(address) : []));
  return [address, ...embedded.map((ipv4) => MAPPED | ipv4)];
}

/** An address without brackets or IPv6 zone (`[fe80::1%eth0]` → `fe80::1`). */
function bareAddress(address: string): string {
  return address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
}

/** The canonical compressed IPv6 form, as the URL parser writes it (mapped tail in hex). */
function canonicalIPv6(address: string): string {
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/**
 * The IPv4 address behind an IPv4-mapped IPv6 address (`::ffff:169.254.169.254`,
 * `::ffff:a9fe:a9fe`), so that the IPv4 rules apply to it; other addresses in canonical form.
 */
export function normaliseAddress(address: string): string {
  const bare = bareAddress(address);
  if (isIP(bare) !== 6) return bare;
  const canonical = canonicalIPv6(bare);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const high = Number.parseInt(mapped[1], 16);
  const low = Number.parseInt(mapped[2], 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The egress policy of docs/security.md#egress-policy. An address is judged as itself, as every IPv4 address it
 * embeds (NAT64, 6to4, Teredo, IPv4-compatible, IPv4-mapped) and, when one of those is in
 * `0.0.0.0/8` (`::` and `::1` are, as IPv4-compatible addresses), as `127.0.0.1`. In this order:
 * the always-refused ranges and `deny` refuse when any of these matches; a private one is refused
 * unless `allowPrivate`, or `allow` names it or the address itself; everything else is allowed.
 *
 * @example
 * const policy = createEgressPolicy({ allowPrivate: false, allow: ['10.1.2.0/24'] });
 * policy.check('10.1.2.3'); // { allowed: true }
 * policy.check('64:ff9b::a09:909'); // { allowed: false, reason: '… 10.9.9.9 …' }
 */
export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  const deny = (options.deny ?? []).map(parseCidr);
  const allow = (options.allow ?? []).map(parseCidr);
  const matches = (list: readonly Cidr[]) => (address: Address) => list.some((cidr) => inCidr(address, cidr));

  return {
    check(text: string): EgressDecision {
      const address = parseAddress(bareAddress(text));
      if (address === undefined) return { allowed: false, reason: 'not an IP address' };
      const forms = embeddedForms(address);
      const candidates = forms.some(matches([LOOPBACK_EQUIVALENT])) ? [...forms, LOOPBACK] : forms;
      // Names the embedded IPv4 address a refusal is about, when it is not the address itself.
      const refuse = (reason: string, candidate: Address): EgressDecision => {
        const judgedAs = candidate === address ? '' : ` (judged as ${formatIPv4(candidate)})`;
        return { allowed: false, reason: `${reason}${judgedAs}` };
      };

      const alwaysRefused = candidates.find(matches(ALWAYS_REFUSED));
      if (alwaysRefused !== undefined) return refuse('link-local and cloud-metadata addresses are always refused', alwaysRefused);
      const denied = candidates.find(matches(deny));
      if (denied !== undefined) return refuse('the address is in IX_EGRESS_DENY', denied);
      if (options.allowPrivate || matches(allow)(address)) return { allowed: true };
      // The loopback equivalent is left out: its 0.0.0.0/8 origin is private already, and `allow`
      // naming 127.0.0.1 does not admit 0.0.0.0 or `::1`.
      const refusedPrivate = forms.find((form) => matches(PRIVATE)(form) && !matches(allow)(form));
      if (refusedPrivate !== undefined) {
        return refuse('private and loopback addresses are refused (IX_EGRESS_ALLOW_PRIVATE=false)', refusedPrivate);
      }
      return { allowed: true };
    },
  };
}
