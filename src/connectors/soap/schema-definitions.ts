import type { JsonSchema } from '../catalog.ts';

/**
 * The named sub-schemas (`$defs`) the JSON Schemas of one WSDL's catalogue share (soap/catalog.ts): each type's schema
 * is built once, when a schema first needs it, under a name unique within the catalogue, so that every entry calls
 * `Address` the same and a type that contains itself is a `$ref` to itself.
 *
 * A schema takes the definitions it reaches breadth-first, within `maxSchemaSize` characters of JSON: past the bound
 * (Exchange's EWS shares types of thousands of elements between its operations), the definitions one level deeper
 * are `{}`, unconstrained (execute still checks the params at every depth), never a refusal. A definition used once
 * and not by itself is written in place; the others go under `$defs`.
 */
export class SchemaDefinitions {
  readonly #byKey = new Map<object, Map<string, Definition>>();
  readonly #byName = new Map<string, Definition>();

  /**
   * A `$ref` to the definition of `key` in `role` (a type may have several schemas: its element's value, its text),
   * built by `build` when a schema first reaches it; `name` is a hint, made unique.
   */
  ref(key: object, role: string, name: string, build: () => JsonSchema): JsonSchema {
    let roles = this.#byKey.get(key);
    if (roles === undefined) {
      roles = new Map();
      this.#byKey.set(key, roles);
    }
    let definition = roles.get(role);
    if (definition === undefined) {
      definition = new Definition(this.#uniqueName(name), build);
      roles.set(role, definition);
      this.#byName.set(definition.name, definition);
    }
    return { $ref: `${prefix}${definition.name}` };
  }

  /** `root` with the definitions it reaches, within `maxSize` characters of JSON (see the class). */
  schema(root: JsonSchema, maxSize: number = maxSchemaSize): JsonSchema {
    const included = new Map<string, JsonSchema>();
    const uses = new Map<string, number>();
    let left = maxSize - JSON.stringify(root).length;
    const queue: Definition[] = [];
    const reach = (schema: unknown) => {
      for (const name of refsIn(schema)) {
        uses.set(name, (uses.get(name) ?? 0) + 1);
        const definition = this.#byName.get(name) as Definition;
        if (uses.get(name) === 1) queue.push(definition);
      }
    };
    reach(root);
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      if (left <= 0) continue;
      const body = next.body();
      left -= next.size();
      included.set(next.name, body);
      reach(body);
    }
    const defs: Record<string, JsonSchema> = {};
    const resolve = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(resolve);
      if (typeof value !== 'object' || value === null) return value;
      const name = refName(value as JsonSchema);
      if (name !== undefined) {
        const body = included.get(name);
        if (body === undefined) return {};
        // Used once, and so not by itself (a definition on a cycle is reached from outside it too): in place.
        if (uses.get(name) === 1) return resolve(body);
        if (!Object.hasOwn(defs, name)) {
          defs[name] = {};
          defs[name] = resolve(body) as JsonSchema;
        }
        return value;
      }
      const out = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item)]));
      // `anyOf` of an `anyOf` (a nullable element of a type with alternatives): one list.
      return onlyAnyOf(out) ? { anyOf: (out.anyOf as JsonSchema[]).flatMap((s) => (onlyAnyOf(s) ? s.anyOf : [s])) } : out;
    };
    const schema = resolve(root) as JsonSchema;
    return Object.keys(defs).length === 0 ? schema : { ...schema, $defs: sortedByName(defs) };
  }

  #uniqueName(hint: string): string {
    const base = hint.replace(/[^A-Za-z0-9_.-]/g, '_') || 'type';
    let name = base;
    for (let n = 2; this.#byName.has(name); n++) name = `${base}_${n}`;
    return name;
  }
}

/** An empty map of properties by name: without a prototype, so that an element named `__proto__` is one of them. */
export function byName(): Record<string, JsonSchema> {
  return Object.create(null);
}

/**
 * A value of any of the JSON types: `type` with one (or one and null), else `anyOf` them, as strict Ajv wants it (a
 * union type is refused there, but for a nullable one).
 */
export function typesSchema(types: readonly string[]): JsonSchema {
  if (types.length === 1) return { type: types[0] };
  if (types.length === 2 && types.includes('null')) return { type: [...types] };
  return { anyOf: types.map((type) => ({ type })) };
}

/**
 * The most characters of JSON one schema takes with its definitions, by default: about 8,000 tokens of a language
 * model's context (an MCP client may show a model every tool's schema), and what Ajv compiles in tens of
 * milliseconds (measured on Exchange's EWS with `inlineRefs: false`: ~5 ms per 1,000 characters; with Ajv's default
 * `inlineRefs`, a shared type is compiled again at each use, and one schema of this size took over a second). The
 * root's own content is always kept, and a schema may pass the bound by the one definition that crossed it.
 */
export const maxSchemaSize = 32_000;

const prefix = '#/$defs/';

class Definition {
  readonly name: string;
  readonly #build: () => JsonSchema;
  #body: JsonSchema | undefined;
  #size: number | undefined;

  constructor(name: string, build: () => JsonSchema) {
    this.name = name;
    this.#build = build;
  }

  body(): JsonSchema {
    this.#body ??= this.#build();
    return this.#body;
  }

  /** The characters of its JSON, references to others counted as written. */
  size(): number {
    this.#size ??= JSON.stringify(this.body()).length;
    return this.#size;
  }
}

const onlyAnyOf = (schema: unknown): schema is { anyOf: JsonSchema[] } =>
  typeof schema === 'object' &&
  schema !== null &&
  Object.keys(schema).length === 1 &&
  Array.isArray((schema as JsonSchema).anyOf);

function refName(schema: JsonSchema): string | undefined {
  const ref = schema.$ref;
  return typeof ref === 'string' && ref.startsWith(prefix) && Object.keys(schema).length === 1
    ? ref.slice(prefix.length)
    : undefined;
}

/** The definitions a schema refers to, in the order written (each time written). */
function* refsIn(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    for (const item of value) yield* refsIn(item);
  } else if (typeof value === 'object' && value !== null) {
    const name = refName(value as JsonSchema);
    if (name !== undefined) yield name;
    else for (const item of Object.values(value)) yield* refsIn(item);
  }
}

function sortedByName(defs: Record<string, JsonSchema>): Record<string, JsonSchema> {
  return Object.fromEntries(Object.entries(defs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
