import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate and its key, as PEM. */
export interface Issued {
  cert: string;
  key: string;
}

export interface SignOptions {
  /** The common name. */
  cn: string;
  /** subjectAltName entries (`DNS:localhost,IP:127.0.0.1`); none for a client certificate. */
  san?: string;
  /** `serverAuth` or `clientAuth`. */
  usage: 'serverAuth' | 'clientAuth';
  /** Days valid from now; or an explicit window in OpenSSL's `YYYYMMDDHHMMSSZ` form, for an expired certificate. */
  days?: number;
  window?: { start: string; end: string };
}

/**
 * A throwaway PKI made with the `openssl` command in a temp folder: CAs, and certificates they sign (`openssl ca`,
 * which alone in OpenSSL 3.0 takes explicit start and end dates). EC P-256 keys: quick to make.
 */
export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'ix-pki-'));
  #serial = 0;

  #openssl(args: string[], input?: string): string {
    return execFileSync('openssl', args, { cwd: this.dir, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  }

  #path(name: string): string {
    return join(this.dir, name);
  }

  /** A self-signed CA. */
  ca(name: string, cn: string): Issued {
    this.#openssl([
      'req',
      '-x509',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.pem`,
      '-days',
      '3650',
      '-subj',
      `/O=Interchange tests/CN=${cn}`,
      '-addext',
      'basicConstraints=critical,CA:true',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    return this.#read(name);
  }

  /** A leaf certificate for `name`, signed by the CA made as `caName`. */
  sign(caName: string, name: string, options: SignOptions): Issued {
    this.#openssl([
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/O=Interchange tests/CN=${options.cn}`,
    ]);
    const db = `db-${name}`;
    mkdirSync(this.#path(db));
    writeFileSync(this.#path(`${db}/index.txt`), '');
    writeFileSync(this.#path(`${db}/serial`), `${(++this.#serial).toString(16).padStart(4, '0')}\n`);
    const extensions = [
      'basicConstraints=critical,CA:false',
      'keyUsage=critical,digitalSignature',
      `extendedKeyUsage=${options.usage}`,
      ...(options.san ? [`subjectAltName=${options.san}`] : []),
    ];
    writeFileSync(
      this.#path(`${name}.cnf`),
      [
        '[ca]',
        'default_ca = test_ca',
        '[test_ca]',
        `database = ${db}/index.txt`,
        `serial = ${db}/serial`,
        `new_certs_dir = ${db}`,
        'default_md = sha256',
        'policy = any',
        'unique_subject = no',
        '[any]',
        'organizationName = optional',
        'commonName = supplied',
        '[leaf]',
        ...extensions,
        '',
      ].join('\n'),
    );
    const dates = options.window
      ? ['-startdate', options.window.start, '-enddate', options.window.end]
      : ['-days', String(options.days ?? 365)];
    this.#openssl([
      'ca',
      '-batch',
      '-notext',
      '-config',
      `${name}.cnf`,
      '-extensions',
      'leaf',
      '-cert',
      `${caName}.pem`,
      '-keyfile',
      `${caName}.key`,
      '-in',
      `${name}.csr`,
      '-out',
      `${name}.pem`,
      ...dates,
    ]);
    return this.#read(name);
  }

  /** The key made as `name`, encrypted (PKCS#8, AES-256) with `password`. */
  encryptedKey(name: string, password: string): string {
    return this.#openssl(['pkcs8', '-topk8', '-in', `${name}.key`, '-v2', 'aes-256-cbc', '-passout', `pass:${password}`]);
  }

  #read(name: string): Issued {
    return { cert: readFileSync(this.#path(`${name}.pem`), 'utf8'), key: readFileSync(this.#path(`${name}.key`), 'utf8') };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
