import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

/** `config.tls` (docs/security.md#tls), as stored (the key and its password are secrets). */
export interface TlsConfig {
  /** PEM bundle; when set, only these roots are trusted for the integration. */
  readonly ca?: string;
  /** PEM chain, leaf first, for mutual TLS. */
  readonly client_certificate?: string;
  /** PEM private key of the client certificate (secret). */
  readonly client_key?: string;
  /** Password of an encrypted `client_key` (secret). */
  readonly client_key_password?: string;
  /** The name sent as SNI and verified in the upstream's certificate, in place of the URL's host. */
  readonly server_name?: string;
  readonly min_version?: 'TLSv1.2' | 'TLSv1.3';
}

export interface TlsProblem {
  readonly path: string;
  readonly message: string;
}

/** What an answer shows of a certificate instead of its PEM. */
export interface CertificateFacts {
  readonly subject: string;
  readonly issuer: string;
  /** ISO 8601. */
  readonly not_after: string;
  /** SHA-256 of the DER, colon-separated hex as OpenSSL prints it. */
  readonly fingerprint_sha256: string;
}

/** `config.tls` as answers show it: facts in place of PEM, and whether each secret is set, never its value. */
export interface TlsView {
  readonly ca?: CertificateFacts[];
  readonly client_certificate?: CertificateFacts;
  readonly server_name?: string;
  readonly min_version: 'TLSv1.2' | 'TLSv1.3';
  readonly client_key_set: boolean;
  readonly client_key_password_set: boolean;
}

/** Options for `tls.connect` (and undici's connector), built from one integration's `config.tls`. */
export interface TlsConnectOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly passphrase?: string;
  readonly servername?: string;
  readonly minVersion: 'TLSv1.2' | 'TLSv1.3';
  /** Always true: certificate verification can not be turned off (docs/security.md#tls). */
  readonly rejectUnauthorized: true;
}

export interface Clock {
  readonly now: Date;
}

const PATH = 'config.tls';
const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;
const MIN_VERSIONS = new Set(['TLSv1.2', 'TLSv1.3']);
const DAY_MS = 86_400_000;
/** A DNS name: dot-separated labels of letters, digits and inner hyphens (SNI carries no IP address, RFC 6066 §3). */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i;

/** The certificates of a PEM bundle, in order; undefined when it holds none or one does not parse. */
function parseCertificates(pem: string): X509Certificate[] | undefined {
  const blocks = pem.match(CERTIFICATE_BLOCK);
  if (!blocks) return undefined;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return undefined;
  }
}

/** The certificates that parse, for views and warnings of a config that was valid when stored. */
function readableCertificates(pem: string | undefined): X509Certificate[] {
  if (pem === undefined) return [];
  return (pem.match(CERTIFICATE_BLOCK) ?? []).flatMap((block) => {
    try {
      return [new X509Certificate(block)];
    } catch {
      return [];
    }
  });
}

/** A distinguished name on one line (`CN=Test CA, O=Example`), most specific first; Node prints one attribute a line. */
function distinguishedName(name: string): string {
  return name.split('\n').filter(Boolean).reverse().join(', ');
}

function facts(certificate: X509Certificate): CertificateFacts {
  return {
    subject: distinguishedName(certificate.subject),
    issuer: distinguishedName(certificate.issuer),
    not_after: certificate.validToDate.toISOString(),
    fingerprint_sha256: certificate.fingerprint256,
  };
}

type KeyResult = { key: KeyObject } | { problem: TlsProblem };

/** PKCS#8 `ENCRYPTED PRIVATE KEY`, or a traditional PEM key with `Proc-Type: 4,ENCRYPTED`. */
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,\s*ENCRYPTED/;

/**
 * The private key, or why it cannot be read. An encrypted key that does not open is the password's problem: OpenSSL's
 * errors (a cancelled prompt, "bad decrypt", a garbled decryption that fails to parse) do not say so reliably.
 */
function readPrivateKey(pem: string, password: string | undefined): KeyResult {
  const encrypted = ENCRYPTED_KEY.test(pem);
  if (encrypted && password === undefined) {
    return { problem: { path: `${PATH}.client_key_password`, message: 'is required: client_key is encrypted' } };
  }
  try {
    // The password only for an encrypted key: OpenSSL ignores it otherwise, and so does this check.
    return { key: createPrivateKey({ key: pem, format: 'pem', passphrase: encrypted ? password : undefined }) };
  } catch {
    if (encrypted) return { problem: { path: `${PATH}.client_key_password`, message: 'does not decrypt client_key' } };
    return { problem: { path: `${PATH}.client_key`, message: 'is not a PEM private key' } };
  }
}

function typeProblems(tls: TlsConfig): TlsProblem[] {
  const fields = ['ca', 'client_certificate', 'client_key', 'client_key_password', 'server_name', 'min_version'] as const;
  return fields
    .filter((field) => tls[field] !== undefined && typeof tls[field] !== 'string')
    .map((field) => ({ path: `${PATH}.${field}`, message: 'must be a string' }));
}

function clientProblems(tls: TlsConfig, now: Date): TlsProblem[] {
  const { client_certificate: certificatePem, client_key: keyPem } = tls;
  if (certificatePem === undefined && keyPem === undefined) {
    if (tls.client_key_password === undefined) return [];
    return [{ path: `${PATH}.client_key_password`, message: 'is set without client_key' }];
  }
  if (keyPem === undefined) return [{ path: `${PATH}.client_key`, message: 'is required with client_certificate' }];
  if (certificatePem === undefined) return [{ path: `${PATH}.client_certificate`, message: 'is required with client_key' }];
  const problems: TlsProblem[] = [];
  const chain = parseCertificates(certificatePem);
  const leaf = chain?.[0];
  if (leaf === undefined) problems.push({ path: `${PATH}.client_certificate`, message: 'is not a PEM certificate chain' });
  else if (leaf.validToDate.getTime() <= now.getTime()) {
    problems.push({
      path: `${PATH}.client_certificate`,
      message: `expired on ${leaf.validToDate.toISOString()} (${distinguishedName(leaf.subject)})`,
    });
  }
  const key = readPrivateKey(keyPem, tls.client_key_password);
  if ('problem' in key) problems.push(key.problem);
  else if (leaf !== undefined && !leaf.checkPrivateKey(key.key)) {
    problems.push({ path: `${PATH}.client_key`, message: 'does not match client_certificate' });
  }
  return problems;
}

/**
 * Why `config.tls` can not be stored, each problem at its field's path (PUT/PATCH answer `400 validation_failed`):
 * unparsable PEM, a key that does not match its certificate or does not decrypt, an expired client certificate.
 *
 * @example
 * tlsProblems({ client_certificate: pem, client_key: otherKey }, { now: new Date() });
 * // [{ path: 'config.tls.client_key', message: 'does not match client_certificate' }]
 */
export function tlsProblems(tls: TlsConfig, { now }: Clock): TlsProblem[] {
  const typed = typeProblems(tls);
  if (typed.length > 0) return typed;
  const problems: TlsProblem[] = [];
  if (tls.ca !== undefined && parseCertificates(tls.ca) === undefined) {
    problems.push({ path: `${PATH}.ca`, message: 'is not a PEM bundle of certificates' });
  }
  problems.push(...clientProblems(tls, now));
  if (tls.server_name !== undefined && (isIP(tls.server_name) !== 0 || !DNS_NAME.test(tls.server_name))) {
    problems.push({ path: `${PATH}.server_name`, message: 'must be a DNS name (SNI can not carry an IP address)' });
  }
  if (tls.min_version !== undefined && !MIN_VERSIONS.has(tls.min_version)) {
    problems.push({ path: `${PATH}.min_version`, message: 'must be "TLSv1.2" or "TLSv1.3"' });
  }
  return problems;
}

/**
 * `config.tls` as answers show it: the facts of each certificate instead of its PEM, and only whether the key and
 * its password are set.
 */
export function describeTls(tls: TlsConfig): TlsView {
  const clientLeaf = readableCertificates(tls.client_certificate)[0];
  return {
    ca: tls.ca === undefined ? undefined : readableCertificates(tls.ca).map(facts),
    client_certificate: clientLeaf === undefined ? undefined : facts(clientLeaf),
    server_name: tls.server_name,
    min_version: tls.min_version ?? 'TLSv1.2',
    client_key_set: tls.client_key !== undefined,
    client_key_password_set: tls.client_key_password !== undefined,
  };
}

export interface WarningOptions extends Clock {
  /** How close an expiry must be to be named; docs/security.md#tls says 30 days. */
  readonly withinDays: number;
}

/**
 * Sentences naming each certificate of `config.tls` that has expired or expires within `withinDays` (`test`'s
 * `details.warnings`, `interchange doctor`): the client certificate's whole chain and every CA of the bundle.
 */
export function tlsWarnings(tls: TlsConfig, { now, withinDays }: WarningOptions): string[] {
  const named = [
    ...readableCertificates(tls.client_certificate).map((certificate) => ({ field: 'client_certificate', certificate })),
    ...readableCertificates(tls.ca).map((certificate) => ({ field: 'ca', certificate })),
  ];
  return named.flatMap(({ field, certificate }) => {
    const left = certificate.validToDate.getTime() - now.getTime();
    if (left > withinDays * DAY_MS) return [];
    const name = `config.tls.${field} certificate ${distinguishedName(certificate.subject)}`;
    const date = certificate.validToDate.toISOString();
    if (left <= 0) return [`${name} expired on ${date}.`];
    const days = Math.ceil(left / DAY_MS);
    return [`${name} expires on ${date}, in ${days} day${days === 1 ? '' : 's'}.`];
  });
}

/**
 * The connect options for the integration's upstream: its roots (replacing the system's when `ca` is set), its
 * client certificate and key, SNI name and lowest version. Verification is always on.
 */
export function connectOptions(tls: TlsConfig): TlsConnectOptions {
  return {
    ca: tls.ca,
    cert: tls.client_certificate,
    key: tls.client_key,
    passphrase: tls.client_key_password,
    servername: tls.server_name,
    minVersion: tls.min_version ?? 'TLSv1.2',
    rejectUnauthorized: true,
  };
}
