import { isJsonObject } from '../../core/json-object.ts';
import { typeKey, typeLabel } from './derived-types.ts';
import { valueKeys } from './envelope.ts';
import { xsdNamespaces } from './namespaces.ts';
import {
  type ComplexModel,
  integerBuiltins,
  particleIndex,
  type SimpleModel,
  simpleModelOf,
  type TypeModel,
} from './type-model.ts';
import { xsiTypeOf } from './xml-reader.ts';

/**
 * A WSDL-mode result shaped by the output's schema (docs/execute.md#results): an element that may repeat (`maxOccurs > 1`)
 * is always a list, even with one item or none read as one, and numbers and booleans the XML carried as text are
 * typed when their schema type says so, attributes' values too. Unknown elements (`xsd:any`, or what the schema does
 * not declare) stay as the reader read them (response.ts). An element whose `xsi:type` names a type derived from its
 * declared one is shaped by the derived type and says which in `$type` (derived-types.ts); one whose declared type
 * is simple (`anyType` included) and whose `xsi:type` names a built-in (rpc/encoded answers carry one on every value)
 * is typed as that built-in. An empty element of a complex type without text is an object none of whose members is
 * there (`{}`), an empty SOAP-encoded array `[]`, not the empty text the reader read.
 *
 * @example shapeResult(model, { lines: { sku: 'A', quantity: '2' } }) // { lines: [{ sku: 'A', quantity: 2 }] }
 */
export function shapeResult(declared: ComplexModel, value: unknown): unknown {
  if (value === '' && declared.text === undefined) return declared.arrayOf ? [] : {};
  if (!isJsonObject(value)) return value;
  const instance = xsiTypeOf(value);
  const derived = instance && declared.subtypes?.get(`{${instance.ns}}${instance.local}`);
  const model = derived ?? declared;
  if (model.arrayOf) return arrayItems(model.arrayOf, value);
  // By the name the element is written with; a part declared with element= is given under the part's name.
  const byName = particleIndex(model).byElementName;
  const attributes = typeAnnotationsDropped(value.$attributes);
  const shaped: Array<[string, unknown]> = [];
  if (derived && instance) shaped.push([typeKey, typeLabel(declared, instance.ns, instance.local)]);
  for (const [key, item] of Object.entries(value)) {
    if (key === '$attributes') {
      if (attributes !== undefined) shaped.push([key, typedAttributes(model, attributes)]);
      continue;
    }
    if (key === '$value' && model.text !== undefined && typeof item === 'string') {
      shaped.push([key, typedText(model.text, item)]);
      continue;
    }
    const particle = byName.get(key);
    if (!particle) {
      shaped.push([key, item]);
      continue;
    }
    const items = particle.repeated && !Array.isArray(item) ? [item] : item;
    shaped.push([
      particle.name,
      Array.isArray(items) ? items.map((one) => shapeValue(particle.model, one)) : shapeValue(particle.model, items),
    ]);
  }
  // fromEntries defines own properties: an element named __proto__ (a valid XML name) stays an element.
  return Object.fromEntries(shaped);
}

function shapeValue(declared: TypeModel, value: unknown): unknown {
  if (declared.kind === 'complex') return shapeResult(declared, value);
  const instance = xsiTypeOf(value);
  const model = instance !== undefined && xsdNamespaces.has(instance.ns) ? simpleModelOf(instance.local) : declared;
  // A simple type has no attributes of its own (XML Schema 3.14): attributes on it are the instance's own xsi:type
  // (rpc/encoded services put one on every value), so its text is the value.
  if (isJsonObject(value) && Object.keys(value).every((key) => valueKeys.has(key))) {
    return typedText(model, typeof value.$value === 'string' ? value.$value : '');
  }
  return typeof value === 'string' ? typedText(model, value) : value;
}

/**
 * An element's attributes without the SOAP encoding's type annotations: `xsi:type` and `soapenc:arrayType` (read
 * without their prefixes, as `type` and `arrayType`) when their value is a prefixed QName, as those always are.
 * A declared attribute named `type` holding a plain word stays. Undefined when nothing is left.
 */
function typeAnnotationsDropped(attributes: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(attributes)) return undefined;
  const kept = Object.entries(attributes).filter(
    ([name, value]) => !((name === 'type' || name === 'arrayType') && typeof value === 'string' && /^[^\s:]+:\S+$/.test(value)),
  );
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/** Declared attributes' values as their types say (an `xs:int` attribute is a number); others as read. */
function typedAttributes(model: ComplexModel, attributes: Record<string, unknown>): Record<string, unknown> {
  if (!model.attributes?.length) return attributes;
  const declared = model.attributes;
  // fromEntries defines own properties: an attribute named __proto__ stays an attribute.
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => {
      const attribute = declared.find((a) => a.name === name);
      return [name, attribute && typeof value === 'string' ? typedText(attribute.model, value) : value];
    }),
  );
}

/** A SOAP-encoded array as the list of its items, whatever they are named (`item`, the item type's name). */
function arrayItems(items: TypeModel, value: Record<string, unknown>): unknown[] {
  const list: unknown[] = [];
  for (const [key, item] of Object.entries(value)) {
    if (valueKeys.has(key)) continue;
    for (const one of Array.isArray(item) ? item : [item]) list.push(shapeValue(items, one));
  }
  return list;
}

/** What JSON a simple type's text reads as: a number of integers or of floating point, a boolean, else text. */
function readKind(model: SimpleModel): 'integer' | 'float' | 'boolean' | 'text' {
  if (model.union !== undefined) return unionKind(model.union);
  if (model.list !== undefined) return 'text';
  if (integerBuiltins.has(model.builtin)) return 'integer';
  if (model.builtin === 'double' || model.builtin === 'float') return 'float';
  return model.builtin === 'boolean' ? 'boolean' : 'text';
}

/** The one kind every member of a union reads as, or text when they differ. */
function unionKind(members: readonly SimpleModel[]): 'integer' | 'float' | 'boolean' | 'text' {
  const kinds = new Set(members.map(readKind));
  return kinds.size === 1 ? ([...kinds][0] as 'integer' | 'float' | 'boolean' | 'text') : 'text';
}

/**
 * Text as the number or boolean its type says, when it is one exactly; an integer beyond 2^53 stays text. A list
 * type's text is the list of its items, each typed; a union's is typed when all its members read alike.
 */
function typedText(model: SimpleModel, text: string): unknown {
  if (model.list !== undefined) {
    const item = model.list;
    return text
      .split(/\s+/)
      .filter(Boolean)
      .map((one) => typedText(item, one));
  }
  // A union's value is typed when every member reads as the same JSON type, as python-zeep reads unions (measured:
  // Exchange's ReminderMinutesBeforeStart, a union of two restrictions of xs:int, is 38; Amazon's
  // positiveIntegerOrAll, a positiveInteger or the string "All", stays "1"). Otherwise it stays text, so its JSON type
  // does not change with the member it fits.
  if (model.union !== undefined) {
    const kind = unionKind(model.union);
    return kind === 'text' ? text : typedText(model.union[0], text);
  }
  const trimmed = text.trim();
  if (model.builtin === 'boolean') {
    if (trimmed === 'true' || trimmed === '1') return true;
    if (trimmed === 'false' || trimmed === '0') return false;
    return text;
  }
  if (integerBuiltins.has(model.builtin) && /^[+-]?\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    return Number.isSafeInteger(n) ? n : text;
  }
  if ((model.builtin === 'double' || model.builtin === 'float') && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed)) {
    return Number(trimmed);
  }
  return text;
}
