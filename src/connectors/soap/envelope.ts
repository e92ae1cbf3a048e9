import { type ValidationIssue, validationFailed } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { xsiNamespace } from './namespaces.ts';
import { escapeMarkup, escapeXml, hasXmlIllegalCharacter } from './xml.ts';

export type SoapVersion = '1.1' | '1.2';

/** The namespace of the Envelope, per SOAP version. */
export const envelopeNamespaces = {
  '1.1': 'http://schemas.xmlsoap.org/soap/envelope/',
  '1.2': 'http://www.w3.org/2003/05/soap-envelope',
} as const satisfies Record<SoapVersion, string>;

/** The keys an element's object holds beside its child elements: its attributes and its text (docs/execute.md#params-to-xml). */
export const valueKeys: ReadonlySet<string> = new Set(['$attributes', '$value']);

export interface EnvelopeInput {
  version: SoapVersion;
  /** The method element's namespace; none leaves the method element unqualified. */
  namespace?: string;
  method: string;
  params?: Record<string, unknown>;
  soapHeaders?: Record<string, unknown>;
  /** Keys of params objects that are no elements: `$attributes` and `$value`, and WSDL mode's `$type`. */
  valueKeys?: ReadonlySet<string>;
}

/**
 * The raw-mode request envelope (docs/execute.md#raw-mode), compact, after an XML declaration.
 *
 * - The Envelope declares `soap` (its namespace) and `xsi`, so names and attributes may use `soap:` and `xsi:`
 *   (`"$attributes": {"soap:mustUnderstand": "1"}`); other prefixes must be declared by the caller with
 *   `"$attributes": {"xmlns:p": "…"}`.
 * - `<soap:Header>` only when `soapHeaders` has at least one entry; each entry is a header element, sent as given
 *   (SOAP wants header blocks namespace-qualified: give them an `xmlns`).
 * - The method element carries `namespace` as its default namespace (`<Add xmlns="urn:calc">`), so unprefixed
 *   params inherit it: the element-form-qualified style of .NET and most document/literal services. For a service
 *   that wants unqualified children, set `"$attributes": {"xmlns": ""}` on them.
 * - Params: object → child elements in key order; array → the element repeated (no element when empty; an array
 *   directly inside an array is refused); `$attributes` → attributes (null ones left out); `$value` → text, written
 *   before any child elements; string, number, boolean → text; null → `<name xsi:nil="true"/>`, the schema's way of
 *   saying null (an empty element would be an empty string); undefined → left out. `$attributes`/`$value` at the top
 *   of `params` apply to the method element itself.
 * - Element and attribute names must be XML QNames (`Name`, `p:Name`); a wrong name, a value that is not JSON-like or
 *   a character XML 1.0 cannot carry is `validation_failed` listing every problem, with paths such as
 *   `params.items.0.bad name`, `soap_headers.Auth.$attributes.x y` or `method`.
 *
 * @example buildEnvelope({ version: '1.1', namespace: 'urn:calc', method: 'Add', params: { a: 2 } })
 * // '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"
 * //   xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soap:Body><Add xmlns="urn:calc"><a>2</a></Add></soap:Body></soap:Envelope>'
 */
export function buildEnvelope(input: EnvelopeInput): string {
  const { xml, issues } = renderEnvelope(input);
  if (issues.length > 0) throw validationFailed(issues);
  return xml;
}

/** Every problem `buildEnvelope` would refuse, with request paths, for checking a request before anything is sent. */
export function envelopeIssues(input: EnvelopeInput): ValidationIssue[] {
  return renderEnvelope(input, false).issues;
}

/**
 * The HTTP headers of a SOAP call: SOAP 1.1 sends the action in the `SOAPAction` header, SOAP 1.2 as the `action`
 * parameter of the Content-Type, both as `quotedSoapAction` writes it. The action must have passed
 * `soapActionProblem` (the connector checks it before anything is sent; here it is only a guard).
 *
 * @example requestHeaders({ version: '1.1', soapAction: 'CUCM:DB ver=14.0 listPhone' })
 * // { 'content-type': 'text/xml; charset=utf-8', soapaction: '"CUCM:DB ver=14.0 listPhone"' }
 */
export function requestHeaders(input: { version: SoapVersion; soapAction: string }): Record<string, string> {
  const action = quotedSoapAction(input.soapAction);
  if (input.version === '1.2') {
    return {
      'content-type': `application/soap+xml; charset=utf-8; action=${action}`,
      accept: `application/soap+xml, ${packages}`,
    };
  }
  return { 'content-type': 'text/xml; charset=utf-8', soapaction: action, accept: `text/xml, ${packages}` };
}

/** The MIME packages answers may come in (mime.ts reads them): JAX-WS answers MTOM only to a client that says so. */
const packages = 'multipart/related, application/xop+xml';

/**
 * What no HTTP header can carry, even in a quoted-string (RFC 9110 §5.6.4 allows HTAB, SP, visible ASCII and
 * obs-text): the controls but HTAB, and DEL. An unpaired surrogate is no character at all.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding what a header cannot carry is the point.
const unsendable = /[\u0000-\u0008\u000a-\u001f\u007f]|\p{Cs}/u;

/**
 * Why `action` cannot be sent as a SOAP action, or undefined when it can: it holds a character no HTTP header can
 * carry (CR, LF and the other controls but HTAB). Nothing else is refused: `quotedSoapAction` can write the rest.
 *
 * @example soapActionProblem('CUCM:DB ver=14.0 listPhone') // undefined
 * @example soapActionProblem('urn:a\r\nX-Injected: 1') // 'holds U+000D, a control character no HTTP header can carry'
 */
export function soapActionProblem(action: string): string | undefined {
  const found = unsendable.exec(action)?.[0];
  if (found === undefined) return undefined;
  const code = `U+${(found.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
  return found.length === 1 && found <= '\u007f'
    ? `holds ${code}, a control character no HTTP header can carry`
    : `holds ${code}, an unpaired surrogate (no character)`;
}

/**
 * The action as an RFC 9110 quoted-string, as the WSDL declares it (WSDL 1.1 §3.4: the soapAction attribute is the
 * header's value) or the caller gives it: a space travels as is, `"` and `\` as quoted-pairs (`\"`, `\\`).
 * Characters beyond ASCII are written as their UTF-8 bytes percent-encoded, the mapping of an anyURI to a URI
 * (XML Schema 2 §3.2.17): a header carries octets, not characters (undici sends U+0080–U+00FF as one Latin-1 byte,
 * an encoding the server cannot know, and refuses anything beyond), and the action is a URI.
 *
 * @example quotedSoapAction('urn:a "b" c\\d') // '"urn:a \\"b\\" c\\\\d"'
 * @example quotedSoapAction('urn:ü') // '"urn:%C3%BC"'
 */
export function quotedSoapAction(action: string): string {
  const problem = soapActionProblem(action);
  // Checked before anything is sent: reaching here with such an action is a bug, never a header split.
  if (problem !== undefined) throw new Error(`a SOAP action that ${problem} reached the transport`);
  const ascii = action.replace(/[\u{80}-\u{10FFFF}]/gu, (c) => encodeURIComponent(c));
  return `"${ascii.replace(/["\\]/g, '\\$&')}"`;
}

function renderEnvelope(input: EnvelopeInput, write = true): { xml: string; issues: ValidationIssue[] } {
  const writer = new XmlWriter(input.valueKeys, write);
  const method = checkedName(input.method, 'method', writer.issues);
  const namespace = input.namespace === undefined || input.namespace === '' ? undefined : input.namespace;
  if (namespace !== undefined && hasXmlIllegalCharacter(namespace)) {
    writer.issues.push({ path: 'namespace', message: 'contains a character XML 1.0 cannot carry' });
  }
  const params = input.params ?? {};
  const attributes = params.$attributes;
  if (namespace !== undefined && isJsonObject(attributes) && Object.hasOwn(attributes, 'xmlns')) {
    writer.issues.push({ path: 'params.$attributes.xmlns', message: 'the method element takes its xmlns from `namespace`' });
  }
  const headers = input.soapHeaders === undefined ? [] : Object.entries(input.soapHeaders);
  const header = headers.map(([name, value]) => writer.element(name, value, `soap_headers.${name}`)).join('');
  // With a bad method name the params are still walked, so every problem is reported at once.
  const body = writer.element(method ?? 'method', params, 'params', namespace);
  if (!write) return { xml: '', issues: writer.issues };
  const xml =
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${envelopeNamespaces[input.version]}" xmlns:xsi="${xsiNamespace}">` +
    (headers.length > 0 ? `<soap:Header>${header}</soap:Header>` : '') +
    `<soap:Body>${body}</soap:Body></soap:Envelope>`;
  return { xml, issues: writer.issues };
}

/**
 * Writes JSON-like values as XML elements, collecting every problem instead of stopping at the first. One made with
 * `write` false only checks: it walks the same values and finds the same problems, and writes nothing (every text it
 * returns is empty), so a request is checked before anything runs without building its envelope twice.
 */
export class XmlWriter {
  readonly issues: ValidationIssue[] = [];
  /** Keys of an object that are no elements. */
  readonly #valueKeys: ReadonlySet<string>;
  readonly #write: boolean;
  readonly #validNames = new Set<string>();

  constructor(keys: ReadonlySet<string> = valueKeys, write = true) {
    this.#valueKeys = keys;
    this.#write = write;
  }

  /** The element `name` holding `value` (several for an array, none for undefined); `path` names it in issues. */
  element(name: string, value: unknown, path: string, defaultNamespace?: string): string {
    if (!this.#nameChecked(name, path) || value === undefined) return '';
    if (Array.isArray(value)) {
      let xml = '';
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        if (!Array.isArray(item)) xml += this.element(name, item, `${path}.${i}`);
        else this.issues.push({ path: `${path}.${i}`, message: 'an array cannot directly hold another array' });
      }
      return xml;
    }
    if (value === null) return this.#write ? `<${name}${xmlnsAttribute(defaultNamespace)} xsi:nil="true"/>` : '';
    let attributes = '';
    let content: string;
    if (isJsonObject(value)) {
      if (value.$attributes !== undefined) attributes = this.attributes(value.$attributes, `${path}.$attributes`);
      content = this.content(value, path);
    } else {
      content = this.text(value, path, 'must be a string, number, boolean, null, object or array');
    }
    if (!this.#write) return '';
    const namespace = xmlnsAttribute(defaultNamespace);
    const start = `<${name}${namespace}${attributes}`;
    return content === '' ? `${start}/>` : `${start}>${content}</${name}>`;
  }

  private content(value: Record<string, unknown>, path: string): string {
    let xml = value.$value === undefined || value.$value === null ? '' : this.text(value.$value, `${path}.$value`);
    for (const key of Object.keys(value)) {
      if (!this.#valueKeys.has(key)) xml += this.element(key, value[key], `${path}.${key}`);
    }
    return xml;
  }

  /** Whether `name` is a valid element name (else an issue on `path`); a request repeats its names, each tested once. */
  #nameChecked(name: string, path: string): boolean {
    if (this.#validNames.has(name)) return true;
    if (checkedName(name, path, this.issues) === undefined) return false;
    this.#validNames.add(name);
    return true;
  }

  /** `$attributes` as attribute text (` a="1" b="2"`). */
  attributes(value: unknown, path: string): string {
    if (value === undefined || value === null) return '';
    if (!isJsonObject(value)) {
      this.issues.push({ path, message: 'must be an object of attribute values' });
      return '';
    }
    let xml = '';
    for (const [name, attribute] of Object.entries(value)) {
      const attributePath = `${path}.${name}`;
      if (checkedName(name, attributePath, this.issues, 'attribute') === undefined) continue;
      if (attribute === undefined || attribute === null) continue;
      const text = this.text(attribute, attributePath);
      if (this.#write) xml += ` ${name}="${text}"`;
    }
    return xml;
  }

  /** A scalar as escaped text. */
  text(value: unknown, path: string, expected = 'must be a string, number or boolean'): string {
    if (typeof value === 'string') {
      if (!hasXmlIllegalCharacter(value)) return this.#write ? escapeMarkup(value) : '';
      this.issues.push({ path, message: 'contains a character XML 1.0 cannot carry' });
      return this.#write ? escapeXml(value) : '';
    }
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
      return this.#write ? String(value) : '';
    }
    this.issues.push({ path, message: expected });
    return '';
  }
}

/** ` xmlns="…"` for a default namespace, or nothing. */
const xmlnsAttribute = (namespace: string | undefined) => (namespace === undefined ? '' : ` xmlns="${escapeXml(namespace)}"`);

// XML 1.0 (5th edition) NameStartChar and NameChar, without the colon: an NCName.
const nameStart =
  'A-Z_a-z\\u{C0}-\\u{D6}\\u{D8}-\\u{F6}\\u{F8}-\\u{2FF}\\u{370}-\\u{37D}\\u{37F}-\\u{1FFF}\\u{200C}-\\u{200D}' +
  '\\u{2070}-\\u{218F}\\u{2C00}-\\u{2FEF}\\u{3001}-\\u{D7FF}\\u{F900}-\\u{FDCF}\\u{FDF0}-\\u{FFFD}\\u{10000}-\\u{EFFFF}';
const nameRest = `${nameStart}\\-.0-9\\u{B7}\\u{300}-\\u{36F}\\u{203F}-\\u{2040}`;
const ncName = `[${nameStart}][${nameRest}]*`;
const qualifiedName = new RegExp(`^(?:${ncName}:)?${ncName}$`, 'u');

/** The name when it is a valid XML QName, else undefined with an issue on `path`. */
function checkedName(name: string, path: string, issues: ValidationIssue[], kind = 'element'): string | undefined {
  if (qualifiedName.test(name)) return name;
  issues.push({ path, message: `is not a valid XML ${kind} name` });
  return undefined;
}
