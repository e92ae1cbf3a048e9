import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Independent tools for the WS-Security tests, none of them ours: the `openssl` command makes the keys and
 * certificates and reads back what a key reference should say; two verifiers of unrelated lineage check signatures,
 * `xmlsec1` (libxmlsec1) and the JDK's XML Signature (Santuario, which WSS4J uses) driven by
 * test/support/fixtures/wsse/VerifyWsse.java; Debian's Python recomputes password digests. .ci/run installs what is missing.
 */

const wsu = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd';
const wsse = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';

export interface Pem {
  certificate: string;
  privateKey: string;
  certificatePath: string;
}

/** Keys and certificates made by openssl in a temporary folder; `remove()` deletes it. Nothing here is committed. */
export interface TestKeys {
  dir: string;
  rsa: Pem;
  ec: Pem;
  /** A second RSA pair: signing with one and verifying with the other must fail. */
  otherRsa: Pem;
  /** An EC pair whose name has a multi-valued RDN (CN and UID). */
  multiValued: Pem;
  /** `rsa`'s key encrypted (PKCS#8, AES-256) with `encryptedPassword`. */
  encryptedRsaKey: string;
  encryptedPassword: string;
  /** A v1 certificate (no extensions) for `rsa`'s key. */
  v1Rsa: Pem;
  /** A certificate for `rsa`'s key valid only in January 2020. */
  expiredCertificate: string;
  remove(): void;
}

function openssl(cwd: string, ...args: string[]): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function makeTestKeys(): TestKeys {
  const dir = mkdtempSync(join(tmpdir(), 'interchange-wsse-'));
  const pair = (name: string, keyArgs: string[], subject: string): Pem => {
    openssl(
      dir,
      'req',
      '-x509',
      ...keyArgs,
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '30',
      '-subj',
      subject,
    );
    return {
      certificate: readFileSync(join(dir, `${name}.crt`), 'utf8'),
      privateKey: readFileSync(join(dir, `${name}.key`), 'utf8'),
      certificatePath: join(dir, `${name}.crt`),
    };
  };
  // A comma in the organisation, so the RFC 2253 escaping of X509IssuerName is exercised.
  const rsa = pair('rsa', ['-newkey', 'rsa:2048'], '/C=DE/O=Example, Inc./CN=rsa client');
  const ec = pair('ec', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'], '/CN=ec client');
  const otherRsa = pair('other', ['-newkey', 'rsa:2048'], '/CN=someone else');
  // A multi-valued RDN, which Node and RFC 2253 write differently.
  const multiValued = pair(
    'multi',
    ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-multivalue-rdn'],
    '/O=x/CN=a+UID=b',
  );
  const encryptedPassword = 'correct horse';
  openssl(
    dir,
    'pkcs8',
    '-topk8',
    '-in',
    'rsa.key',
    '-out',
    'rsa-encrypted.key',
    '-v2',
    'aes-256-cbc',
    '-passout',
    `pass:${encryptedPassword}`,
  );

  // `openssl ca` is the one openssl 3.0 command that takes explicit validity dates.
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '01\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    '[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n',
  );
  // Without an extensions section `openssl ca` writes a v1 certificate: no subjectKeyIdentifier.
  const caSigned = (name: string, subject: string, validity: string[]) => {
    openssl(dir, 'req', '-new', '-key', 'rsa.key', '-subj', subject, '-out', `${name}.csr`);
    const args = ['-config', 'ca.cnf', '-selfsign', '-keyfile', 'rsa.key', '-in', `${name}.csr`, '-out', `${name}.crt`];
    openssl(dir, 'ca', '-batch', ...args, ...validity);
    return readFileSync(join(dir, `${name}.crt`), 'utf8');
  };
  const expiredCertificate = caSigned('expired', '/CN=expired', ['-startdate', '20200101000000Z', '-enddate', '20200201000000Z']);
  const v1Certificate = caSigned('v1', '/CN=v1 client', ['-days', '30']);
  return {
    dir,
    rsa,
    ec,
    otherRsa,
    multiValued,
    v1Rsa: { certificate: v1Certificate, privateKey: rsa.privateKey, certificatePath: join(dir, 'v1.crt') },
    encryptedRsaKey: readFileSync(join(dir, 'rsa-encrypted.key'), 'utf8'),
    encryptedPassword,
    expiredCertificate,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** What openssl says about a certificate, to compare key references against. */
export function opensslCertificateFacts(certificatePath: string): {
  der: string;
  issuer: string;
  subject: string;
  serial: string;
  ski: string;
  notAfter: string;
} {
  const dir = join(certificatePath, '..');
  const read = (...args: string[]) => openssl(dir, 'x509', '-in', certificatePath, '-noout', ...args).trim();
  const der = execFileSync('openssl', ['x509', '-in', certificatePath, '-outform', 'DER']);
  const skiHex = read('-ext', 'subjectKeyIdentifier').split('\n')[1].trim().replaceAll(':', '');
  return {
    der: der.toString('base64'),
    issuer: read('-issuer', '-nameopt', 'RFC2253').replace(/^issuer=/, ''),
    subject: read('-subject', '-nameopt', 'RFC2253').replace(/^subject=/, ''),
    serial: BigInt(`0x${read('-serial').replace(/^serial=/, '')}`).toString(10),
    ski: Buffer.from(skiHex, 'hex').toString('base64'),
    notAfter: new Date(read('-enddate').replace(/^notAfter=/, '')).toISOString(),
  };
}

/**
 * Verifies the message's signature with xmlsec1 and the public key of `certificatePath`. xmlsec1 knows no wsu:Id, so
 * each element WS-Security signs is declared as carrying an `Id` attribute (xmlsec matches it by local name), and
 * it does not follow a wsse:SecurityTokenReference, hence the key given outright; the tests check the reference
 * itself against openssl.
 */
export function xmlsecVerify(xml: string, certificatePath: string): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'interchange-xmlsec-'));
  try {
    const file = join(dir, 'message.xml');
    writeFileSync(file, xml);
    const idAttributes = [
      `${wsu}:Timestamp`,
      'http://schemas.xmlsoap.org/soap/envelope/:Body',
      'http://www.w3.org/2003/05/soap-envelope:Body',
      `${wsse}:UsernameToken`,
      `${wsse}:BinarySecurityToken`,
    ].flatMap((node) => ['--id-attr:Id', node]);
    const result = spawnSync('xmlsec1', ['--verify', ...idAttributes, '--pubkey-cert-pem', certificatePath, file], {
      encoding: 'utf8',
    });
    return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Base64(SHA-1(nonce + created + password)) as Python's hashlib and base64 compute it. */
export function pythonPasswordDigest(nonceBase64: string, created: string, password: string): string {
  const script =
    'import base64, hashlib, json, sys\n' +
    'd = json.load(sys.stdin)\n' +
    "raw = base64.b64decode(d['nonce']) + d['created'].encode('utf-8') + d['password'].encode('utf-8')\n" +
    'print(base64.b64encode(hashlib.sha1(raw).digest()).decode())\n';
  return execFileSync('/usr/bin/python3', ['-c', script], {
    input: JSON.stringify({ nonce: nonceBase64, created, password }),
    encoding: 'utf8',
  }).trim();
}

const javaVerifierSource = resolve(import.meta.dirname, './fixtures/wsse/VerifyWsse.java');

/**
 * Compiles VerifyWsse.java into `dir` (once: the JVM compiling on every call would be slow) and returns a function
 * that verifies a message with it: the reference must identify `certificatePath`'s certificate and every reference
 * and the signature must validate. `allowSha1` lifts JDK 17's secure-validation ban on SHA-1 signatures.
 */
export function compileJavaVerifier(
  dir: string,
): (xml: string, certificatePath: string, allowSha1?: boolean) => { ok: boolean; output: string } {
  execFileSync('javac', ['-d', dir, javaVerifierSource], { stdio: ['ignore', 'pipe', 'pipe'] });
  return (xml, certificatePath, allowSha1 = false) => {
    const file = join(dir, `message-${process.hrtime.bigint()}.xml`);
    writeFileSync(file, xml);
    try {
      const args = ['-cp', dir, 'VerifyWsse', file, certificatePath, ...(allowSha1 ? ['--allow-sha1'] : [])];
      const result = spawnSync('java', args, { encoding: 'utf8' });
      return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
    } finally {
      rmSync(file, { force: true });
    }
  };
}
