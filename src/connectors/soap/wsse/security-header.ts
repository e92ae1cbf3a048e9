import { createHash, randomBytes as cryptoRandomBytes } from 'node:crypto';
import { type Element, XMLSerializer } from '@xmldom/xmldom';
import { base64Binary, wsseNamespace, wsuNamespace, x509v3 } from './algorithms.ts';
import type { WsSecurityOptions } from './config.ts';
import { bodyId, childElement, headerOf, parseEnvelope } from './envelope.ts';
import { usableMaterial } from './material.ts';
import { signedParts } from './problems.ts';
import { signEnvelope } from './signature.ts';

/** What the clock and the randomness are; tests inject both. */
export interface WsSecurityEnv {
  now?: () => Date;
  randomBytes?: (size: number) => Buffer;
}

const passwordTypes = {
  text: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText',
  digest: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest',
} as const;

/**
 * Adds a `wsse:Security` header block to a complete SOAP 1.1 or 1.2 envelope: `mustUnderstand="1"` in the envelope's
 * own SOAP namespace, then, as configured, a Timestamp, a UsernameToken, a BinarySecurityToken and a Signature
 * (after the tokens it refers to, as WS-Security §5 asks). A Header is made when the envelope has none; other header
 * blocks stay as they are. Every signed element gets its own wsu:Id with a random suffix.
 *
 * The options are checked on every call as on a PUT, at `env.now`: a certificate that has expired since it was
 * configured stops the request here, with a sentence the owner can act on, rather than as the upstream's fault.
 * The key is read and decrypted once per call.
 *
 * Throws `ApiError`: `invalid_soap_params` when the text is not a SOAP envelope (or already has a Security header
 * block), `integration_misconfigured` when the options cannot be used (`details.issues` are `wsSecurityProblems`').
 *
 * @example applyWsSecurity(envelope, { username_token: { username: 'u', password: 'p' }, timestamp: {} })
 */
export function applyWsSecurity(envelope: string, options: WsSecurityOptions, env: WsSecurityEnv = {}): string {
  const material = usableMaterial(options, env.now);
  const now = (env.now ?? (() => new Date()))();
  const random = env.randomBytes ?? cryptoRandomBytes;
  // A random suffix after a per-element prefix: unique in the message even if the randomness were not.
  const newId = (prefix: string) => `${prefix}-${random(16).toString('hex')}`;
  const giveId = (element: Element, prefix: string) => {
    const id = newId(prefix);
    element.setAttributeNS(wsuNamespace, 'wsu:Id', id);
    return id;
  };

  const { document, root, soap } = parseEnvelope(envelope);
  const create = (name: string, namespace = wsseNamespace) => document.createElementNS(namespace, name);
  const add = (parent: Element, name: string, text: string, namespace = wsseNamespace) => {
    const child = create(name, namespace);
    child.appendChild(document.createTextNode(text));
    parent.appendChild(child);
    return child;
  };

  const security = create('wsse:Security');
  security.setAttributeNS(xmlnsNamespace, 'xmlns:wsse', wsseNamespace);
  security.setAttributeNS(xmlnsNamespace, 'xmlns:wsu', wsuNamespace);
  // The envelope may use SOAP's namespace as its default; an attribute needs a prefix.
  const soapPrefix = root.prefix ?? 'soapenv';
  if (!root.prefix) security.setAttributeNS(xmlnsNamespace, `xmlns:${soapPrefix}`, soap);
  security.setAttributeNS(soap, `${soapPrefix}:mustUnderstand`, '1');
  const ids: Record<string, string> = {};

  if (options.timestamp) {
    const timestamp = create('wsu:Timestamp', wsuNamespace);
    ids.timestamp = giveId(timestamp, 'TS');
    add(timestamp, 'wsu:Created', xsDateTime(now), wsuNamespace);
    const expires = new Date(now.getTime() + (options.timestamp.ttl_seconds ?? 300) * 1000);
    add(timestamp, 'wsu:Expires', xsDateTime(expires), wsuNamespace);
    security.appendChild(timestamp);
  }
  if (options.username_token) {
    const settings = options.username_token;
    const type = settings.password_type ?? 'text';
    const token = create('wsse:UsernameToken');
    ids.username_token = giveId(token, 'UT');
    add(token, 'wsse:Username', settings.username);
    const nonce = (settings.nonce ?? type === 'digest') ? random(16) : null;
    const created = (settings.created ?? type === 'digest') ? xsDateTime(now) : null;
    const password = type === 'digest' ? passwordDigest(nonce, created, settings.password) : settings.password;
    add(token, 'wsse:Password', password).setAttribute('Type', passwordTypes[type]);
    if (nonce) add(token, 'wsse:Nonce', nonce.toString('base64')).setAttribute('EncodingType', base64Binary);
    if (created) add(token, 'wsu:Created', created, wsuNamespace);
    security.appendChild(token);
  }

  let signed = (xml: string) => xml;
  // usableMaterial has read the material whenever there is a signature.
  if (options.signature && material) {
    const settings = options.signature;
    const keyReference = settings.key_reference ?? 'binary_security_token';
    let tokenId: string | undefined;
    if (keyReference === 'binary_security_token') {
      const token = add(security, 'wsse:BinarySecurityToken', material.certificateBase64);
      token.setAttribute('EncodingType', base64Binary);
      token.setAttribute('ValueType', x509v3);
      tokenId = giveId(token, 'X509');
    }
    const referenceIds = signedParts(options).map((part) =>
      part === 'body' ? bodyId(childElement(root, soap, 'Body')!, () => newId('Body')) : ids[part],
    );
    const securityXpath =
      `/*/*[local-name(.)='Header' and namespace-uri(.)='${soap}']` +
      `/*[local-name(.)='Security' and namespace-uri(.)='${wsseNamespace}']`;
    signed = (xml) =>
      signEnvelope(xml, {
        material,
        signatureAlgorithm: settings.signature_algorithm ?? 'rsa-sha256',
        digestAlgorithm: settings.digest_algorithm ?? 'sha256',
        keyReference,
        tokenId,
        referenceIds,
        securityXpath,
      });
  }

  const header = headerOf(root, soap);
  header.insertBefore(security, header.firstChild);
  return signed(new XMLSerializer().serializeToString(document));
}

const xmlnsNamespace = 'http://www.w3.org/2000/xmlns/';

/**
 * UsernameToken Profile 1.1 §3.1: Base64(SHA-1(nonce + created + password)), the nonce as its bytes, the others as
 * UTF-8, each only when sent.
 */
export function passwordDigest(nonce: Buffer | null, created: string | null, password: string): string {
  const hash = createHash('sha1');
  if (nonce) hash.update(nonce);
  if (created) hash.update(created, 'utf8');
  return hash.update(password, 'utf8').digest('base64');
}

// xs:dateTime in UTC with milliseconds, as WSS4J and .NET write and accept.
function xsDateTime(date: Date): string {
  return date.toISOString();
}
