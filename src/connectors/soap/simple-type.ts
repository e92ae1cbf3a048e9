import { readFacets } from './facets.ts';
import { anyType, type SimpleModel, type TypeLookup } from './type-model.ts';
import type { XmlElement } from './xml-tree.ts';
import { xsdChild, xsdChildren } from './xsd-index.ts';

type Node = XmlElement;

/**
 * The model of a `simpleType`: a list of an item type, a union of member types, or a restriction of a base type, which
 * keeps what the base restricts (its enumeration unless it gives its own, facets, list, union) and adds its own.
 */
export function compileSimpleType(types: TypeLookup, node: Node, namespace: string | undefined): SimpleModel {
  const type = node.attributes.name ?? 'anonymous';
  const derivation = xsdChild(node, 'restriction', 'list', 'union');
  if (derivation?.local === 'list') {
    const itemType = derivation.attributes.itemType;
    const inline = xsdChild(derivation, 'simpleType');
    const item = itemType ? types.namedType(itemType, derivation, namespace) : inline ? types.typeOf(inline, namespace) : anyType;
    return { kind: 'simple', type, builtin: 'anySimpleType', list: item.kind === 'simple' ? item : anyType };
  }
  if (derivation?.local === 'union') {
    const named = (derivation.attributes.memberTypes ?? '').split(/\s+/).filter(Boolean);
    const members = [
      ...named.map((member) => types.namedType(member, derivation, namespace)),
      ...xsdChildren(derivation)
        .filter((c) => c.local === 'simpleType')
        .map((inline) => types.typeOf(inline, namespace)),
    ].filter((member): member is SimpleModel => member.kind === 'simple');
    return { kind: 'simple', type, builtin: 'anySimpleType', union: members };
  }
  if (!derivation) return { ...anyType, type };
  const inlineBase = xsdChild(derivation, 'simpleType');
  const base = derivation.attributes.base
    ? types.namedType(derivation.attributes.base, derivation, namespace)
    : inlineBase
      ? types.typeOf(inlineBase, namespace)
      : anyType;
  const simpleBase = base.kind === 'simple' ? base : undefined;
  const own = xsdChildren(derivation)
    .filter((c) => c.local === 'enumeration')
    .map((c) => c.attributes.value ?? '');
  // A restriction keeps what its base restricts: its enumeration (unless it gives its own), facets, list, union.
  const enumeration = own.length > 0 ? own : simpleBase?.enumeration;
  const facets = readFacets(derivation, simpleBase?.facets);
  return {
    kind: 'simple',
    type: node.attributes.name ?? base.type,
    builtin: simpleBase?.builtin ?? 'anyType',
    ...(enumeration !== undefined && { enumeration }),
    ...(facets !== undefined && { facets }),
    ...(simpleBase?.list !== undefined && { list: simpleBase.list }),
    ...(simpleBase?.union !== undefined && { union: simpleBase.union }),
  };
}
