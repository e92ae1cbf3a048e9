import { validationFailed } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import { derivedType, typeKey } from './derived-types.ts';
import { envelopeNamespaces, type SoapVersion, valueKeys, XmlWriter } from './envelope.ts';
import { soapEncodingNamespace, xmlNamespace, xsdNamespace, xsiNamespace } from './namespaces.ts';
import type { MessageLayout } from './signature.ts';
import { type ComplexModel, particleIndex, type TypeModel } from './type-model.ts';

export interface WsdlEnvelopeInput {
  /** The SOAP version of the port's binding. */
  version: SoapVersion;
  layout: MessageLayout;
  params: Record<string, unknown>;
  soapHeaders?: Record<string, unknown>;
}

/**
 * The envelope a WSDL prescribes for a call (docs/execute.md#wsdl-mode), written from the input's schema model: elements in
 * the schema's order, each in the namespace the schema puts it in (global and qualified elements in their schema's
 * namespace, unqualified ones in none; see `Particle.ns`), the rpc wrapper in `soap:body`'s namespace. Values are
 * written as raw mode writes them (`$attributes`, `$value`, null as `xsi:nil`, a list as the element repeated);
 * elements the schema does not declare (an `xsd:any`) are written as raw mode writes them, where the `xsd:any` stands.
 * A SOAP-encoded array is given as a list: each item is an element named after the item type (`item` with an
 * `xsi:type` for a built-in type), as python-zeep writes them, and the array carries the `soapenc:arrayType`
 * (`xs:string[3]`) SOAP 1.1 section 5.4.2 requires (zeep leaves it out). A value whose `$type` names a type derived
 * from the declared one is written as that type, with its `xsi:type` (derived-types.ts). Params are expected to be checked already
 * (param-checks.ts); names that are no XML names are still refused (`validation_failed`).
 *
 * @example writeWsdlEnvelope({ version: '1.1', layout: multiply, params: { a: 6, b: 7 } })
 * // '…<soap:Body><n0:Multiply xmlns:n0="spyne.examples"><n0:a>6</n0:a><n0:b>7</n0:b></n0:Multiply></soap:Body>…'
 */
export function writeWsdlEnvelope(input: WsdlEnvelopeInput): string {
  const writer = new SchemaWriter();
  const { layout, params } = input;
  // Headers the binding declares are written by their schema (in their namespace); any other as raw mode writes it.
  const header = writer.children(layout.headers, input.soapHeaders ?? {}, 'soap_headers');
  const body = layout.wrapper
    ? writer.element(layout.wrapper.ns, layout.wrapper.local, layout.model, params, 'params')
    : writer.children(layout.model, params, 'params');
  if (writer.raw.issues.length > 0) throw validationFailed(writer.raw.issues);
  return (
    '<?xml version="1.0" encoding="utf-8"?>' +
    `<soap:Envelope xmlns:soap="${envelopeNamespaces[input.version]}" xmlns:xsi="${xsiNamespace}"${writer.declarations()}>` +
    (header === '' ? '' : `<soap:Header>${header}</soap:Header>`) +
    `<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}

/** What a simple type declares: no child elements. */
const noneDeclared: ReadonlyMap<string, unknown> = new Map();

class SchemaWriter {
  /** Writes what the schema leaves open, and collects the problems of names and values. */
  readonly raw = new XmlWriter();
  /** Namespace → prefix, declared on the Envelope. */
  readonly #prefixes = new Map<string, string>();

  /** The namespace declarations of every prefix used. */
  declarations(): string {
    let xml = '';
    for (const [ns, prefix] of this.#prefixes) xml += ` xmlns:${prefix}="${this.raw.text(ns, 'namespace')}"`;
    return xml;
  }

  #name(ns: string, local: string): string {
    if (ns === '') return local;
    if (ns === xmlNamespace) return `xml:${local}`; // bound by XML itself; no other prefix may name it
    let prefix = this.#prefixes.get(ns);
    if (prefix === undefined) {
      prefix = ns === xsdNamespace ? 'xs' : ns === soapEncodingNamespace ? 'soapenc' : `n${this.#prefixes.size}`;
      this.#prefixes.set(ns, prefix);
    }
    return `${prefix}:${local}`;
  }

  /** The element `local` in `ns` holding `value` of type `model` (several for a list, none for undefined). */
  element(ns: string, local: string, model: TypeModel, value: unknown, path: string): string {
    if (value === undefined) return '';
    const array = model.kind === 'complex' ? model.arrayOf : undefined;
    if (Array.isArray(value) && model.kind === 'simple' && model.list !== undefined && value.every((v) => !Array.isArray(v))) {
      // A list type's items (xs:list) in one element, separated by spaces; a list of such lists is the element repeated.
      const items = value.map((item, i) => this.raw.text(item, `${path}[${i}]`));
      return `<${this.#name(ns, local)}>${items.join(' ')}</${this.#name(ns, local)}>`;
    }
    if (Array.isArray(value) && array === undefined) {
      let xml = '';
      for (let i = 0; i < value.length; i++) xml += this.element(ns, local, model, value[i], `${path}[${i}]`);
      return xml;
    }
    const tag = this.#name(ns, local);
    if (value === null) return `<${tag} xsi:nil="true"/>`;
    let attributes = '';
    let content = '';
    if (Array.isArray(value) && array !== undefined) {
      attributes = ` ${this.#name(soapEncodingNamespace, 'arrayType')}="${this.#itemType(array)}[${value.length}]"`;
      content = value.map((item, i) => this.#arrayItem(array, item, `${path}[${i}]`)).join('');
    } else if (isJsonObject(value)) {
      // `$type` names a type derived from the declared one: written as its xsi:type, the content as that type's.
      const derived =
        model.kind === 'complex' && typeof value[typeKey] === 'string' ? derivedType(model, value[typeKey]) : undefined;
      if (derived !== undefined) {
        model = derived.model;
        attributes = ` xsi:type="${this.#name(derived.ns, derived.local)}"`;
      }
      attributes += this.#attributes(model, value.$attributes, `${path}.$attributes`);
      if (value.$value !== undefined && value.$value !== null) content = this.raw.text(value.$value, `${path}.$value`);
      content += model.kind === 'complex' ? this.children(model, value, path) : this.#undeclared(value, noneDeclared, path);
    } else {
      content = this.raw.text(value, path, 'must be a string, number, boolean, null, object or array');
    }
    return content === '' ? `<${tag}${attributes}/>` : `<${tag}${attributes}>${content}</${tag}>`;
  }

  /**
   * `$attributes` as attribute text: an attribute the type declares in a namespace (a `ref`, or a qualified form) gets
   * its prefix (`{"lang": "en"}` is `xml:lang="en"` for `ref="xml:lang"`); any other is written as raw mode writes it.
   */
  #attributes(model: TypeModel, attributes: unknown, path: string): string {
    const declared = model.kind === 'complex' ? model.attributes : undefined;
    if (!isJsonObject(attributes) || !declared?.some((a) => a.ns !== '')) return this.raw.attributes(attributes, path);
    let xml = '';
    const rest: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(attributes)) {
      const attribute = declared.find((a) => a.name === name && a.ns !== '');
      if (attribute === undefined) rest[name] = value;
      else if (value !== undefined && value !== null)
        xml += ` ${this.#name(attribute.ns, name)}="${this.raw.text(value, `${path}.${name}`)}"`;
    }
    return xml + this.raw.attributes(rest, path);
  }

  /** The child elements of `value` in the schema's order; undeclared ones where the type's `xsd:any` stands. */
  children(model: ComplexModel, value: Record<string, unknown>, path: string): string {
    const { byName: declared, firstOfName } = particleIndex(model);
    const particles = model.particles;
    const anyAt = model.anyAt ?? particles.length;
    let xml = '';
    for (let i = 0; i < particles.length; i++) {
      if (i === anyAt) xml += this.#undeclared(value, declared, path);
      const particle = particles[i];
      if (!firstOfName[i] || !Object.hasOwn(value, particle.name)) continue;
      const name = particle.elementName ?? particle.name;
      xml += this.element(particle.ns, name, particle.model, value[particle.name], `${path}.${particle.name}`);
    }
    if (anyAt >= particles.length) xml += this.#undeclared(value, declared, path);
    return xml;
  }

  #undeclared(value: Record<string, unknown>, declared: ReadonlyMap<string, unknown>, path: string): string {
    let xml = '';
    for (const key of Object.keys(value)) {
      if (!valueKeys.has(key) && key !== typeKey && !declared.has(key))
        xml += this.raw.element(key, value[key], `${path}.${key}`);
    }
    return xml;
  }

  /** The QName of a SOAP-encoded array's item type, as `soapenc:arrayType` writes it. */
  #itemType(model: TypeModel): string {
    if (model.kind === 'simple') return this.#name(xsdNamespace, model.builtin);
    return model.ns === undefined ? this.#name(xsdNamespace, 'anyType') : this.#name(model.ns, model.type);
  }

  /** One item of a SOAP-encoded array: named after its complex type, else `item` with the built-in type as xsi:type. */
  #arrayItem(model: TypeModel, value: unknown, path: string): string {
    if (model.kind === 'complex' && model.type !== 'anonymous') return this.element('', model.type, model, value, path);
    if (model.kind === 'complex' || model.builtin === 'anyType' || value === null || typeof value === 'object') {
      return this.element('', 'item', model, value, path);
    }
    const type = this.#name(xsdNamespace, model.builtin);
    return `<item xsi:type="${type}">${this.raw.text(value, path)}</item>`;
  }
}
