import { BlockList, isIP } from 'node:net';

/** The egress settings of API.md section 8 (IX_EGRESS_ALLOW_PRIVATE, IX_EGRESS_ALLOW, IX_EGRESS_DENY). */
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

/** Link-local and cloud-metadata ranges: refused whatever the configuration says. */
const ALWAYS_REFUSED = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254'];

/** Private, loopback, CGNAT and unspecified ranges: refused when `allowPrivate` is false. */
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
];

/** Builds a BlockList from CIDRs; a bare address is /32 or /128. Throws on anything else. */
function blockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, prefix, extra] = cidr.trim().split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) {
      throw new TypeError(`egress policy: "${cidr}" is not an address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const bits = prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix);
    if (bits > (family === 4 ? 32 : 128)) throw new TypeError(`egress policy: "${cidr}" has a prefix that is too long`);
    list.addSubnet(address, bits, type);
  }
  return list;
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
 * The egress policy of API.md section 8, checked in this order: the always-refused ranges and
 * `deny` refuse; otherwise `allow` admits; otherwise private ranges are refused unless
 * `allowPrivate`; everything else is allowed.
 *
 * @example
 * const policy = createEgressPolicy({ allowPrivate: false, allow: ['10.1.2.0/24'] });
 * policy.check('10.1.2.3'); // { allowed: true }
 * policy.check('10.9.9.9'); // { allowed: false, reason: '…' }
 */
export function createEgressPolicy(options: EgressPolicyOptions): EgressPolicy {
  const alwaysRefused = blockList(ALWAYS_REFUSED);
  const deny = blockList(options.deny ?? []);
  const allow = blockList(options.allow ?? []);
  const privateRanges = blockList(PRIVATE);

  return {
    check(address: string): EgressDecision {
      const bare = bareAddress(address);
      if (isIP(bare) === 0) return { allowed: false, reason: 'not an IP address' };
      const normalised = normaliseAddress(bare);
      const family = isIP(normalised) === 4 ? 'ipv4' : 'ipv6';
      // BlockList matches an IPv4 address against IPv4 rules and mapped-IPv6 rules (`::ffff:10.0.0.0/104`) alike.
      const matches = (list: BlockList) => list.check(normalised, family);

      if (matches(alwaysRefused)) return { allowed: false, reason: 'link-local and cloud-metadata addresses are always refused' };
      if (matches(deny)) return { allowed: false, reason: 'the address is in IX_EGRESS_DENY' };
      if (matches(allow)) return { allowed: true };
      if (!options.allowPrivate && matches(privateRanges)) {
        return { allowed: false, reason: 'private and loopback addresses are refused (IX_EGRESS_ALLOW_PRIVATE=false)' };
      }
      return { allowed: true };
    },
  };
}
