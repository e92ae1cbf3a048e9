/**
 * WS-Security's names and the algorithms a signature may use: what checking an integration's `ws_security` needs,
 * without the XML libraries that signing loads (signature.ts, loaded with the first message that is signed).
 */
export const wsseNamespace = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';
export const wsuNamespace = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd';
export const base64Binary = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary';
export const x509v3 = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3';

export const signatureAlgorithms = {
  'rsa-sha256': { uri: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', keyType: 'rsa' },
  'rsa-sha1': { uri: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1', keyType: 'rsa' },
  'ecdsa-sha256': { uri: 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256', keyType: 'ec' },
} as const;
export type SignatureAlgorithmName = keyof typeof signatureAlgorithms;

export const digestAlgorithms = {
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  sha1: 'http://www.w3.org/2000/09/xmldsig#sha1',
} as const;
export type DigestAlgorithmName = keyof typeof digestAlgorithms;

export type KeyReference = 'binary_security_token' | 'issuer_serial' | 'subject_key_identifier';
