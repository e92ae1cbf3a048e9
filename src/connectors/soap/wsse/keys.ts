import { createHash, createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';

/**
 * The signing material of `ws_security.signature`, read from its PEM texts: what the signer needs and what `test`
 * and the key references show. Loading throws a `KeyMaterialError` naming the field at fault, so that validation
 * (`wsSecurityProblems`) and signing report the same sentence.
 */
export interface SigningMaterial {
  certificate: X509Certificate;
  privateKey: KeyObject;
  /** The certificate's DER, base64: a BinarySecurityToken's content. */
  certificateBase64: string;
  /** The issuer as an RFC 2253 string (most significant RDN last), as X509IssuerSerial carries it. */
  issuerName: string;
  /** The serial number in decimal, as X509IssuerSerial carries it. */
  serialNumber: string;
  /** The Subject Key Identifier, base64 (X.509 Token Profile 1.1 §3.2). */
  subjectKeyIdentifier: string;
  /** The subject as an RFC 2253 string, for `test`. */
  subject: string;
}

/** A PEM field that cannot be used; `field` is its name under `ws_security.signature`. */
export class KeyMaterialError extends Error {
  override name = 'KeyMaterialError';
  readonly field: 'certificate' | 'private_key' | 'private_key_password';

  constructor(field: KeyMaterialError['field'], message: string) {
    super(message);
    this.field = field;
  }
}

/** Reads the certificate and the private key (decrypting it with the password), and checks they belong together. */
export function loadSigningMaterial(certificatePem: string, privateKeyPem: string, password?: string): SigningMaterial {
  const certificate = readCertificate(certificatePem);
  const privateKey = readPrivateKey(privateKeyPem, password);
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new KeyMaterialError('private_key', 'The private key does not belong to the certificate.');
  }
  return {
    certificate,
    privateKey,
    certificateBase64: certificate.raw.toString('base64'),
    issuerName: rfc2253(certificate.issuer),
    serialNumber: BigInt(`0x${certificate.serialNumber}`).toString(10),
    subjectKeyIdentifier: subjectKeyIdentifier(certificate).toString('base64'),
    subject: rfc2253(certificate.subject),
  };
}

export function readCertificate(pem: string): X509Certificate {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new KeyMaterialError('certificate', 'The certificate is not a PEM X.509 certificate (-----BEGIN CERTIFICATE-----).');
  }
  try {
    return new X509Certificate(pem);
  } catch {
    throw new KeyMaterialError('certificate', 'The certificate does not parse as a PEM X.509 certificate.');
  }
}

function readPrivateKey(pem: string, password: string | undefined): KeyObject {
  // PKCS#8 says so in its label, PKCS#1 and SEC 1 in a Proc-Type header.
  const encrypted = pem.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----') || /Proc-Type:\s*4,ENCRYPTED/.test(pem);
  if (encrypted && !password) {
    throw new KeyMaterialError('private_key_password', 'The private key is encrypted; private_key_password is missing.');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem', passphrase: password });
  } catch {
    if (encrypted)
      throw new KeyMaterialError('private_key_password', 'The private key does not decrypt with private_key_password.');
    throw new KeyMaterialError('private_key', 'The private key does not parse as a PEM private key.');
  }
  if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ec') {
    throw new KeyMaterialError('private_key', `The private key is ${key.asymmetricKeyType}; only RSA and EC keys can sign.`);
  }
  return key;
}

/**
 * Node writes a name one RDN a line, most significant first, the values of a multi-valued RDN joined by " + ", each
 * value already escaped as RFC 2253 asks (a "+" in a value is "\\+"); RFC 2253 wants the RDNs the other way round,
 * separated by commas, and the values joined by a bare "+".
 */
function rfc2253(nodeName: string): string {
  return nodeName.split('\n').reverse().join(',').replaceAll(' + ', '+');
}

const subjectKeyIdentifierOid = Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x0e]);

/**
 * The certificate's subjectKeyIdentifier extension, or, when it has none (a v1 certificate), the SHA-1 of its
 * subjectPublicKey bits (RFC 5280 §4.2.1.2, method 1), which is what WSS4J and .NET fall back to as well.
 */
function subjectKeyIdentifier(certificate: X509Certificate): Buffer {
  const tbs = children(children(certificate.raw)[0]);
  const extensions = tbs.find((field) => field[0] === 0xa3);
  for (const extension of extensions ? children(children(extensions)[0]) : []) {
    const [oid, ...rest] = children(extension);
    // extnValue is an OCTET STRING holding the DER of the KeyIdentifier, itself an OCTET STRING.
    if (oid.equals(subjectKeyIdentifierOid)) return content(content(rest[rest.length - 1]));
  }
  const spki = certificate.publicKey.export({ type: 'spki', format: 'der' });
  const bits = content(children(spki)[1]);
  return createHash('sha1').update(bits.subarray(1)).digest(); // the first byte counts unused bits
}

// Just enough DER to walk a certificate: definite lengths, as DER always has.
function header(tlv: Buffer): { start: number; end: number } {
  const first = tlv[1];
  if (first < 0x80) return { start: 2, end: 2 + first };
  const octets = first & 0x7f;
  return { start: 2 + octets, end: 2 + octets + tlv.readUIntBE(2, octets) };
}

function content(tlv: Buffer): Buffer {
  const { start, end } = header(tlv);
  return tlv.subarray(start, end);
}

function children(tlv: Buffer): Buffer[] {
  const inner = content(tlv);
  const result: Buffer[] = [];
  for (let offset = 0; offset < inner.length; ) {
    const { end } = header(inner.subarray(offset));
    result.push(inner.subarray(offset, offset + end));
    offset += end;
  }
  return result;
}
