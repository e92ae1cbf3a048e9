import { DOMParser, type Element } from '@xmldom/xmldom';
import { ApiError } from '../../../core/errors.ts';
import { wsseNamespace, wsuNamespace } from './algorithms.ts';

/** The envelope's DOM as WS-Security edits it: xmldom's, which xml-crypto reads too. */
export type EnvelopeDocument = ReturnType<DOMParser['parseFromString']>;

const soapNamespaces = new Set(['http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope']);
const xmlnsNamespace = 'http://www.w3.org/2000/xmlns/';

/**
 * Parses a SOAP 1.1 or 1.2 envelope, or throws `invalid_soap_params`: not well-formed, a DTD, no Envelope in a SOAP
 * namespace, no Body, or a wsse:Security header block already there (two would leave the receiver to guess).
 */
export function parseEnvelope(text: string): { document: EnvelopeDocument; root: Element; soap: string } {
  // SOAP 1.1 §3 and 1.2 §5 forbid a DTD, and refusing one means no entity is ever expanded.
  if (/<!DOCTYPE/i.test(text)) throw notAnEnvelope('it has a DTD, which SOAP forbids');
  let document: EnvelopeDocument;
  try {
    document = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(text, 'text/xml');
  } catch {
    throw notAnEnvelope('it is not well-formed XML');
  }
  const root = document.documentElement;
  if (root?.localName !== 'Envelope' || !soapNamespaces.has(root.namespaceURI ?? '')) {
    throw notAnEnvelope('its root is not a SOAP 1.1 or 1.2 Envelope');
  }
  const soap = root.namespaceURI!;
  if (!childElement(root, soap, 'Body')) throw notAnEnvelope('it has no Body');
  const header = childElement(root, soap, 'Header');
  if (header && childElement(header, wsseNamespace, 'Security')) throw notAnEnvelope('it already has a wsse:Security header');
  return { document, root, soap };
}

function notAnEnvelope(why: string): ApiError {
  return new ApiError('invalid_soap_params', `WS-Security cannot be added to the SOAP envelope: ${why}.`);
}

/** The first child element of `parent` with that namespace and local name. */
export function childElement(parent: Element, namespace: string, localName: string): Element | undefined {
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).namespaceURI === namespace && (node as Element).localName === localName) {
      return node as Element;
    }
  }
  return undefined;
}

/** The envelope's Header, made (before the Body, with the Envelope's prefix) when there is none. */
export function headerOf(root: Element, soap: string): Element {
  const existing = childElement(root, soap, 'Header');
  if (existing) return existing;
  const header = root.ownerDocument!.createElementNS(soap, root.prefix ? `${root.prefix}:Header` : 'Header');
  root.insertBefore(header, childElement(root, soap, 'Body')!);
  return header;
}

/**
 * The Body's wsu:Id: the one the writer gave it, or a new one, with `wsu` declared on the Body. A payload that binds
 * `wsu` to another namespace keeps its meaning: xmldom's serializer declares it again where the payload uses it.
 */
export function bodyId(body: Element, newId: () => string): string {
  const existing = body.getAttributeNS(wsuNamespace, 'Id');
  if (existing) return existing;
  const id = newId();
  body.setAttributeNS(xmlnsNamespace, 'xmlns:wsu', wsuNamespace);
  body.setAttributeNS(wsuNamespace, 'wsu:Id', id);
  return id;
}
