import { type ValidationIssue, validationFailed } from '../../errors.ts';
import { escapeXml, hasXmlIllegalCharacter } from './xml.ts';

export type SoapVersion = '1.1' | '1.2';

/** The namespace of the Envelope, per SOAP version. */
export const envelopeNamespaces = {
  '1.1': 'http://schemas.xmlsoap.org/soap/envelope/',
  '1.2': 'http://www.w3.org/2003/05/soap-envelope',
} as const satisfies Record<SoapVersion, string>;

export const xsiNamespace = 'http://www.w3.org/2001/XMLSchema-instance';

/** The keys an element's object holds beside its child elements: its attributes and its text (docs/execute.md#params-to-xml). */
export const valueKeys: ReadonlySet<string> = new Set(['$attributes', '$value']);

export interface EnvelopeInput {
  version: SoapVersion;
  /** The method element's namespace; none leaves the method element unqualified. */
  namespace?: string;
  method: string;
  params?: Record<string, unknown>;
  soapHeaders?: Record<string, unknown>;
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
  return renderEnvelope(input).issues;
}

/**
 * The HTTP headers of a raw-mode call: SOAP 1.1 sends the action in a quoted `SOAPAction` header, SOAP 1.2 as the
 * `action` parameter of the Content-Type. The action is a URI: characters a header cannot carry safely (controls,
 * space, `"`, `\`, anything beyond ASCII) are percent-encoded as UTF-8, so a caller's action cannot inject headers.
 *
 * @example requestHeaders({ version: '1.1', soapAction: 'urn:calc/Add' })
 * // { 'content-type': 'text/xml; charset=utf-8', soapaction: '"urn:calc/Add"' }
 */
export function requestHeaders(input: { version: SoapVersion; soapAction: string }): Record<string, string> {
  const action = headerSafeAction(input.soapAction);
  if (input.version === '1.2') return { 'content-type': `application/soap+xml; charset=utf-8; action="${action}"` };
  return { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${action}"` };
}

function headerSafeAction(action: string): string {
  return action.replace(/[^\x21\x23-\x5b\x5d-\x7e]/gu, (c) =>
    [...Buffer.from(c, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

function renderEnvelope(input: EnvelopeInput): { xml: string; issues: ValidationIssue[] } {
  const writer = new XmlWriter();
  const method = checkedName(input.method, 'method', writer.issues);
  const namespace = input.namespace === undefined || input.namespace === '' ? undefined : input.namespace;
  if (namespace !== undefined && hasXmlIllegalCharacter(namespace)) {
    writer.issues.push({ path: 'namespace', message: 'contains a character XML 1.0 cannot carry' });
  }
  const params = input.params ?? {};
  const attributes = params.$attributes;
  if (namespace !== undefined && isPlainObject(attributes) && Object.hasOwn(attributes, 'xmlns')) {
    writer.issues.push({ path: 'params.$attributes.xmlns', message: 'the method element takes its xmlns from `namespace`' });
  }
  const headers = input.soapHeaders === undefined ? [] : Object.entries(input.soapHeaders);
  const header = headers.map(([name, value]) => writer.element(name, value, `soap_headers.${name}`)).join('');
  // With a bad method name the params are still walked, so every problem is reported at once.
  const body = writer.element(method ?? 'method', params, 'params', namespace);
  const xml =
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${envelopeNamespaces[input.version]}" xmlns:xsi="${xsiNamespace}">` +
    (headers.length > 0 ? `<soap:Header>${header}</soap:Header>` : '') +
    `<soap:Body>${body}</soap:Body></soap:Envelope>`;
  return { xml, issues: writer.issues };
}

/** Writes JSON-like values as XML elements, collecting every problem instead of stopping at the first. */
export class XmlWriter {
  readonly issues: ValidationIssue[] = [];

  /** The element `name` holding `value` (several for an array, none for undefined); `path` names it in issues. */
  element(name: string, value: unknown, path: string, defaultNamespace?: string): string {
    if (checkedName(name, path, this.issues) === undefined || value === undefined) return '';
    if (Array.isArray(value)) {
      return value
        .map((item, i) => {
          if (!Array.isArray(item)) return this.element(name, item, `${path}.${i}`);
          this.issues.push({ path: `${path}.${i}`, message: 'an array cannot directly hold another array' });
          return '';
        })
        .join('');
    }
    const namespace = defaultNamespace === undefined ? '' : ` xmlns="${escapeXml(defaultNamespace)}"`;
    if (value === null) return `<${name}${namespace} xsi:nil="true"/>`;
    let attributes = '';
    let content: string;
    if (isPlainObject(value)) {
      attributes = this.attributes(value.$attributes, `${path}.$attributes`);
      content = this.content(value, path);
    } else {
      content = this.text(value, path, 'must be a string, number, boolean, null, object or array');
    }
    const start = `<${name}${namespace}${attributes}`;
    return content === '' ? `${start}/>` : `${start}>${content}</${name}>`;
  }

  private content(value: Record<string, unknown>, path: string): string {
    let xml = value.$value === undefined || value.$value === null ? '' : this.text(value.$value, `${path}.$value`);
    for (const [key, child] of Object.entries(value)) {
      if (!valueKeys.has(key)) xml += this.element(key, child, `${path}.${key}`);
    }
    return xml;
  }

  /** `$attributes` as attribute text (` a="1" b="2"`). */
  attributes(value: unknown, path: string): string {
    if (value === undefined || value === null) return '';
    if (!isPlainObject(value)) {
      this.issues.push({ path, message: 'must be an object of attribute values' });
      return '';
    }
    let xml = '';
    for (const [name, attribute] of Object.entries(value)) {
      const attributePath = `${path}.${name}`;
      if (checkedName(name, attributePath, this.issues, 'attribute') === undefined) continue;
      if (attribute === undefined || attribute === null) continue;
      xml += ` ${name}="${this.text(attribute, attributePath)}"`;
    }
    return xml;
  }

  /** A scalar as escaped text. */
  text(value: unknown, path: string, expected = 'must be a string, number or boolean'): string {
    if (typeof value === 'string') {
      if (hasXmlIllegalCharacter(value)) this.issues.push({ path, message: 'contains a character XML 1.0 cannot carry' });
      return escapeXml(value);
    }
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
    this.issues.push({ path, message: expected });
    return '';
  }
}

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

/** A JSON object (not null, not an array): an element's content in params. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
