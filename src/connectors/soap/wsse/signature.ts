import { type BinaryLike, createPrivateKey, createPublicKey, type KeyLike, KeyObject, sign, verify } from 'node:crypto';
import { createOptionalCallbackFunction, type SignatureAlgorithm, SignedXml } from 'xml-crypto';
import { escapeXml } from '../xml.ts';
import {
  base64Binary,
  type DigestAlgorithmName,
  digestAlgorithms,
  type KeyReference,
  type SignatureAlgorithmName,
  signatureAlgorithms,
  wsseNamespace,
  wsuNamespace,
  x509v3,
} from './algorithms.ts';
import type { SigningMaterial } from './keys.ts';

const x509SubjectKeyIdentifier =
  'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509SubjectKeyIdentifier';
const exclusiveC14n = 'http://www.w3.org/2001/10/xml-exc-c14n#';

export interface SignPlan {
  material: SigningMaterial;
  signatureAlgorithm: SignatureAlgorithmName;
  digestAlgorithm: DigestAlgorithmName;
  keyReference: KeyReference;
  /** The wsu:Id of the BinarySecurityToken, when `keyReference` is `binary_security_token`. */
  tokenId?: string;
  /** The wsu:Id of each element to sign, each its own. */
  referenceIds: string[];
  /** Where the Signature goes: appended to this element (the wsse:Security header block). */
  securityXpath: string;
}

/**
 * Signs the elements `plan.referenceIds` name with an enveloped XML-DSig Signature, exclusive C14N for SignedInfo and
 * every reference, and a KeyInfo that is a wsse:SecurityTokenReference of the chosen form.
 */
export function signEnvelope(xml: string, plan: SignPlan): string {
  const signer = new SignedXml({
    privateKey: plan.material.privateKey,
    signatureAlgorithm: signatureAlgorithms[plan.signatureAlgorithm].uri,
    canonicalizationAlgorithm: exclusiveC14n,
    // Ids are ours already; this mode only makes xml-crypto look for them in the wsu namespace.
    idMode: 'wssecurity',
    getKeyInfoContent: () => securityTokenReference(plan),
  });
  // XML-DSig 1.1 defines ECDSA but xml-crypto 6 has no implementation of it.
  signer.SignatureAlgorithms[signatureAlgorithms['ecdsa-sha256'].uri] = EcdsaSha256;
  for (const id of plan.referenceIds) {
    signer.addReference({
      xpath: `//*[@*[local-name(.)='Id' and namespace-uri(.)='${wsuNamespace}']='${id}']`,
      transforms: [exclusiveC14n],
      digestAlgorithm: digestAlgorithms[plan.digestAlgorithm],
    });
  }
  signer.computeSignature(xml, { prefix: 'ds', location: { reference: plan.securityXpath, action: 'append' } });
  return signer.getSignedXml();
}

// The STR declares wsse itself: xml-crypto parses KeyInfo on its own before putting it in the document.
function securityTokenReference(plan: SignPlan): string {
  const open = `<wsse:SecurityTokenReference xmlns:wsse="${wsseNamespace}">`;
  const close = '</wsse:SecurityTokenReference>';
  const { material } = plan;
  switch (plan.keyReference) {
    case 'binary_security_token':
      return `${open}<wsse:Reference URI="#${plan.tokenId}" ValueType="${x509v3}"/>${close}`;
    case 'issuer_serial':
      return (
        `${open}<ds:X509Data><ds:X509IssuerSerial><ds:X509IssuerName>${escapeXml(material.issuerName)}</ds:X509IssuerName>` +
        `<ds:X509SerialNumber>${material.serialNumber}</ds:X509SerialNumber></ds:X509IssuerSerial></ds:X509Data>${close}`
      );
    case 'subject_key_identifier':
      return (
        `${open}<wsse:KeyIdentifier EncodingType="${base64Binary}" ValueType="${x509SubjectKeyIdentifier}">` +
        `${material.subjectKeyIdentifier}</wsse:KeyIdentifier>${close}`
      );
  }
}

/** ECDSA over SHA-256; XML-DSig carries the signature as r‖s (IEEE P1363), not as DER. */
class EcdsaSha256 implements SignatureAlgorithm {
  getSignature = createOptionalCallbackFunction((signedInfo: BinaryLike, privateKey: KeyLike): string =>
    sign('sha256', toBuffer(signedInfo), {
      key: privateKey instanceof KeyObject ? privateKey : createPrivateKey(privateKey),
      dsaEncoding: 'ieee-p1363',
    }).toString('base64'),
  );
  verifySignature = createOptionalCallbackFunction((material: string, key: KeyLike, signatureValue: string): boolean =>
    verify(
      'sha256',
      Buffer.from(material),
      { key: key instanceof KeyObject ? key : createPublicKey(key), dsaEncoding: 'ieee-p1363' },
      Buffer.from(signatureValue, 'base64'),
    ),
  );
  getAlgorithmName = (): string => signatureAlgorithms['ecdsa-sha256'].uri;
}

function toBuffer(data: BinaryLike): Buffer {
  return typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
