import { ApiError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { bodyExcerpt } from '../../transport/excerpt.ts';
import { headerNamed } from '../../transport/headers.ts';
import { parseSoapFault } from './fault.ts';
import { type Attachment, isMultipartRelated, unpackMultipart } from './mime.ts';
import { resolveReferences } from './references.ts';
import { attributePrefix, childElement, elementValue, parseXml, textKey } from './xml.ts';
import { XmlBoundExceeded } from './xml-bounds.ts';

/**
 * Normalises a raw-mode SOAP answer (already decompressed) into the method's result or an ApiError (docs/execute.md#faults-and-other-failures),
 * without any I/O.
 *
 * - A Fault, SOAP 1.1 or 1.2, whatever the HTTP status: `soap_fault`, message = the fault string, details
 *   `{fault_code, fault_string, detail}` (see `parseSoapFault`).
 * - Any other non-2xx: `upstream_http_error` with `upstream_status` and `body_excerpt` (≤ 1 KiB) — an empty body, an
 *   HTML page, text, XML that cannot be read (a DTD included: it is refused, never parsed) or a valid envelope alike.
 * - 2xx: an HTML page (`<!DOCTYPE html` or `<html` first), unreadable XML (malformed, or declaring a DTD) and XML
 *   that is not an `Envelope` with a `Body` are `upstream_invalid_response` with `upstream_status`, `content_type`
 *   and `body_excerpt`.
 * - Any status: XML beyond the bounds of docs/limits.md#upstreams (nesting, attributes of one element, size; see xml-bounds.ts) is
 *   `upstream_invalid_response` with those details, its message naming the bound; it is not read any further.
 * - 2xx with an empty body (a one-way operation: WS-I Basic Profile answers them 202 or 200 with no body) or an empty
 *   Body: `{}`.
 * - Otherwise the Body's first child element (`AddResponse`) as an object of its children (`{AddResult: "5"}`), as
 *   `elementValue` shows it: values stay strings, repeated elements are arrays, attributes under `$attributes`, text
 *   beside children or attributes under `$value`; an empty response element is `{}` and a text-only one
 *   `{$value: text}`. SOAP 1.1 encoding's multi-reference values (`href="#id0"` standing for a `multiRef id="id0"`
 *   beside the result, as Axis 1 answers) are resolved (references.ts).
 *
 * With `bodyParts` (a document-style output of several parts), every element of the Body by name instead.
 *
 * A `multipart/related` answer (MTOM/XOP, SOAP with Attachments) is read from its root part, each `xop:Include`
 * replaced by the base64 text of the part it names; the parts nothing includes are the result's `$attachments`
 * (mime.ts).
 *
 * The body is read as UTF-8 unless it starts with a UTF-16 byte-order mark; a declared `encoding` is not honoured.
 *
 * @example readSoapResponse(200, {}, Buffer.from('<s:Envelope xmlns:s="…"><s:Body><AddResponse><AddResult>5</AddResult></AddResponse></s:Body></s:Envelope>'))
 * // { AddResult: '5' }
 */
export function readSoapResponse(
  status: number,
  headers: Record<string, string>,
  body: Buffer,
  options: ReadOptions = {},
): Record<string, unknown> {
  const success = status >= 200 && status <= 299;
  const contentType = headerNamed(headers, 'content-type');
  let attachments: Attachment[] = [];
  if (isMultipartRelated(contentType)) {
    ({ envelope: body, attachments } = unpackMultipart(contentType as string, body));
  }
  const text = decodeXmlBody(body);
  if (text.trim() === '') {
    if (success) return {};
    throw httpError(status, body);
  }
  if (isHtmlPage(text)) {
    if (success) throw invalidResponse('The upstream answered an HTML page, not a SOAP envelope.', status, headers, body);
    throw httpError(status, body);
  }
  let document: unknown;
  try {
    document = parseXml(text);
  } catch (error) {
    if (!success && !(error instanceof XmlBoundExceeded)) throw httpError(status, body);
    throw error instanceof ApiError ? invalidResponse(error.message, status, headers, body) : error;
  }
  const fault = parseSoapFault(document);
  if (fault !== undefined) {
    throw new ApiError('soap_fault', fault.fault_string === '' ? undefined : fault.fault_string, { ...fault });
  }
  if (!success) throw httpError(status, body);
  const soapBody = childElement(childElement(document, 'Envelope'), 'Body');
  if (soapBody === undefined) {
    throw invalidResponse('The upstream answer is XML but not a SOAP envelope with a Body.', status, headers, body);
  }
  const result = options.bodyParts ? bodyParts(soapBody) : methodResult(soapBody, options.maxResolvedBytes);
  if (attachments.length > 0) result.$attachments = attachments;
  return result;
}

export interface ReadOptions {
  /**
   * The output is a document-style message of several parts (WSDL mode): the result is every element of the Body,
   * by name (`{Summary: …, Detail: …}`), not the first one's content.
   */
  bodyParts?: boolean;
  /** The most JSON the answer's multi-reference values may resolve to (IX_EXECUTE_MAX_BYTES; references.ts). */
  maxResolvedBytes?: number;
}

/** Every element of the Body, by name, as `elementValue` shows them. */
function bodyParts(soapBody: unknown): Record<string, unknown> {
  const value = elementValue(soapBody);
  if (!isJsonObject(value)) return {};
  const { $attributes: _attributes, $value: _text, ...parts } = value;
  return parts;
}

/**
 * The Body's first child element as an object (repeated first elements: the first one), its multi-reference
 * accessors (`href="#id"`) resolved from the Body's other children that carry an `id` (references.ts).
 */
function methodResult(soapBody: unknown, maxResolvedBytes: number | undefined): Record<string, unknown> {
  if (!isJsonObject(soapBody)) return {};
  const names = Object.keys(soapBody).filter((key) => key !== textKey && !key.startsWith(attributePrefix));
  if (names.length === 0) return {};
  const [name, ...others] = names;
  let value = elementValue(childElement(soapBody, name));
  const independent = independentElements(soapBody, others);
  if (independent.size > 0) value = resolveReferences(value, independent, { maxBytes: maxResolvedBytes });
  if (isJsonObject(value)) return value;
  return value === '' || value === null ? {} : { $value: value };
}

/** The Body's elements beside the result that carry an `id` (SOAP 1.1 §5.4.1's independent elements), by id. */
function independentElements(soapBody: Record<string, unknown>, names: string[]): Map<string, unknown> {
  const byId = new Map<string, unknown>();
  for (const name of names) {
    const nodes = soapBody[name];
    for (const node of Array.isArray(nodes) ? nodes : [nodes]) {
      const id = isJsonObject(node) ? node[`${attributePrefix}id`] : undefined;
      if (typeof id === 'string' && !byId.has(id)) byId.set(id, elementValue(node));
    }
  }
  return byId;
}

/** Whether the first markup, after any XML declaration, processing instructions and comments, opens an HTML page. */
function isHtmlPage(text: string): boolean {
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at])) at++;
    const close = text.startsWith('<?', at) ? '?>' : text.startsWith('<!--', at) ? '-->' : undefined;
    if (close === undefined) break;
    const end = text.indexOf(close, at + 2);
    if (end === -1) return false;
    at = end + close.length;
  }
  return /^<(?:!doctype\s+html|html)[\s>/]/i.test(text.slice(at, at + 16));
}

/** The body as text: UTF-8 (byte-order mark dropped), or UTF-16 when a UTF-16 byte-order mark says so. */
function decodeXmlBody(body: Buffer): string {
  if (body[0] === 0xff && body[1] === 0xfe) return body.subarray(2).toString('utf16le');
  if (body[0] === 0xfe && body[1] === 0xff) {
    const bigEndian = Buffer.from(body.subarray(2, body.length - (body.length % 2)));
    return bigEndian.swap16().toString('utf16le');
  }
  const text = body.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function httpError(status: number, body: Buffer): ApiError {
  return new ApiError('upstream_http_error', `The upstream SOAP service answered HTTP ${status}.`, {
    upstream_status: status,
    body_excerpt: bodyExcerpt(body),
  });
}

function invalidResponse(message: string, status: number, headers: Record<string, string>, body: Buffer): ApiError {
  const contentType = headerNamed(headers, 'content-type');
  return new ApiError('upstream_invalid_response', message, {
    upstream_status: status,
    ...(contentType === undefined ? {} : { content_type: contentType }),
    body_excerpt: bodyExcerpt(body),
  });
}
