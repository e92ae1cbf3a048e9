import { api } from './api.js';

/**
 * An integration's operation catalogue (docs/catalog.md) as the console uses it: its entries, its `catalog` settings, and
 * what try-it-out builds from an entry (a SOAP call's fields, a params template from its input schema).
 */

/** The `catalog` field with every setting at its default where the integration has none. */
export function catalogOf(integration) {
  return {
    mcp: false,
    allow_writes: false,
    read_operations: [],
    documents: [],
    root_fields: false,
    descriptions: {},
    ...integration?.catalog,
  };
}

/** One page of entries: `{entries, nextCursor}`. */
export async function listOperations(tenant, id, { cursor = null, limit = 50 } = {}) {
  const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  const page = await api(`/integrations/${encodeURIComponent(id)}/operations?${query}`, { tenant });
  return { entries: page.data, nextCursor: page.pagination?.next_cursor ?? null };
}

/** Every entry (all pages, at most `max`). */
export async function loadAllOperations(tenant, id, max = 2000) {
  const all = [];
  let cursor = null;
  do {
    const page = await listOperations(tenant, id, { cursor, limit: 100 });
    all.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor && all.length < max);
  return all;
}

/** Query keys that ask a SOAP endpoint for its WSDL (src/connectors/soap/mode.ts decides; this mirrors it). */
const wsdlQueryKeys = new Set(['wsdl', 'singlewsdl']);

/** Whether a SOAP `endpoint_url` selects WSDL mode (`?wsdl`, `?singleWsdl`, a `.wsdl` path); otherwise raw mode. */
export function isWsdlUrl(endpointUrl) {
  let url;
  try {
    url = new URL(endpointUrl);
  } catch {
    return false;
  }
  for (const key of url.searchParams.keys()) if (wsdlQueryKeys.has(key.toLowerCase())) return true;
  return url.pathname.toLowerCase().endsWith('.wsdl');
}

/** A SOAP integration without a WSDL (raw mode): it has no catalogue. */
export const isRawSoap = (integration) =>
  integration?.connector === 'soap-1.0.0' && !isWsdlUrl(integration.config?.endpoint_url ?? '');

/**
 * The execute fields that name a SOAP entry's operation: an entry of the default port is named by its operation
 * (`Add`), one of another port `<service>.<port>.<operation>`; an overload's name ends `~2`, `~3`… (the params then
 * choose among the overloads).
 *
 * @example soapCallOf('Add~2') // {method: 'Add'}
 * @example soapCallOf('Calculator.CalculatorSoap12.Add') // {method: 'Add', service: 'Calculator', port: 'CalculatorSoap12'}
 */
export function soapCallOf(name) {
  const base = name.replace(/~\d+$/, '');
  const parts = base.split('.');
  if (parts.length < 3) return { method: base };
  return { method: parts.slice(2).join('.'), service: parts[0], port: parts[1] };
}

/** How deep a template goes into nested objects and `$ref`s: a recursive type stops there, as `{}` or `[]`. */
const maxTemplateDepth = 8;

/** The schema a local `$ref` (`#/$defs/Name`, any JSON pointer into the root) points at, or undefined. */
function resolveRef(root, ref) {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  let node = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

/** The first type a schema allows that is not null (`["string", "null"]` → `string`). */
function typeOf(schema) {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t && t !== 'null');
  if (type) return type;
  if (schema.properties || schema.required) return 'object';
  if (schema.items) return 'array';
  return types[0];
}

/** A number within the schema's bounds: 0 when 0 is allowed. */
function numberIn(schema) {
  if (typeof schema.minimum === 'number' && schema.minimum > 0) return schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number' && schema.exclusiveMinimum >= 0) {
    return schema.type === 'integer' ? Math.floor(schema.exclusiveMinimum) + 1 : schema.exclusiveMinimum + 1;
  }
  if (typeof schema.maximum === 'number' && schema.maximum < 0) return schema.maximum;
  return 0;
}

/** `schema` itself, or what its local `$ref` points at. */
const followed = (schema, root) => (schema?.$ref === undefined ? schema : resolveRef(root, schema.$ref));

/** An object of `$value`/`$attributes` only: the long form of a SOAP value that a plain value stands for. */
function isLongForm(schema) {
  const names = Object.keys(schema.properties ?? {});
  return typeOf(schema) === 'object' && names.length > 0 && names.every((n) => n === '$value' || n === '$attributes');
}

/** A string schema whose pattern `""` does not match (an int or a boolean written as text). */
function refusesEmpty(schema) {
  if (typeOf(schema) !== 'string' || typeof schema.pattern !== 'string') return false;
  try {
    return !new RegExp(schema.pattern, 'u').test('');
  } catch {
    return true;
  }
}

/**
 * The alternative of `anyOf`/`oneOf` a template takes: not null, nor a value's long form (`{$value, $attributes}`);
 * a list when there is one (a repeated element takes a list or its one value); else the first whose placeholder is
 * valid (not `""` for a text pattern, when another is left).
 */
function preferred(alternatives, root) {
  const usable = alternatives.filter((a) => {
    const target = followed(a, root);
    return target && typeof target === 'object' && typeOf(target) !== 'null' && !isLongForm(target);
  });
  if (usable.length === 0) return alternatives[0];
  return (
    usable.find((a) => typeOf(followed(a, root)) === 'array' && !followed(a, root).anyOf) ??
    usable.find((a) => !refusesEmpty(followed(a, root))) ??
    usable[0]
  );
}

function templateOf(schema, root, depth) {
  if (schema === null || typeof schema !== 'object') return null;
  if (schema.$ref !== undefined) {
    const target = depth < maxTemplateDepth ? resolveRef(root, schema.$ref) : undefined;
    // The keywords beside a $ref (2020-12 allows them) apply too.
    const { $ref, ...beside } = schema;
    return templateOf({ ...(target && typeof target === 'object' ? target : {}), ...beside }, root, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives) && alternatives.length > 0) return templateOf(preferred(alternatives, root), root, depth);
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0 && !schema.type && !schema.properties) {
    const parts = schema.allOf.map((s) => templateOf(s, root, depth));
    const objects = parts.filter((p) => p && typeof p === 'object' && !Array.isArray(p));
    return objects.length === parts.length ? Object.assign({}, ...objects) : parts[0];
  }
  switch (typeOf(schema)) {
    case 'string':
      return '';
    case 'integer':
    case 'number':
      return numberIn(schema);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array':
      if (depth >= maxTemplateDepth) return [];
      return [templateOf(Array.isArray(schema.prefixItems) ? schema.prefixItems[0] : (schema.items ?? {}), root, depth + 1)];
    case 'object': {
      const value = {};
      if (depth >= maxTemplateDepth) return value;
      const properties = schema.properties ?? {};
      for (const name of Array.isArray(schema.required) ? schema.required : []) {
        value[name] = templateOf(properties[name] ?? {}, root, depth + 1);
      }
      return value;
    }
    default:
      return null;
  }
}

/**
 * A starting value for what `schema` describes: the required properties of objects (recursively), placeholders by
 * type (`""`, `0` or the least number allowed, `false`), an enum's first value, arrays of one item, of alternatives
 * the plain value or the list; local `$ref`s are followed, at most `maxTemplateDepth` levels deep.
 *
 * @example paramsTemplate({type: 'object', required: ['a'], properties: {a: {type: 'integer'}, b: {type: 'string'}}}) // {a: 0}
 */
export function paramsTemplate(schema) {
  const value = templateOf(schema ?? {}, schema ?? {}, 0);
  return value && typeof value === 'object' && !Array.isArray(value) ? value : {};
}
