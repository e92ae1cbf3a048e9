import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { JsonSchema } from '../connectors/catalog.ts';
import type { ValidationIssue } from '../core/errors.ts';
import { toIssues } from '../core/validation.ts';
import type { OfferedTool } from './backend.ts';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** How many tools' compiled input validators are kept at most (the least recently used is dropped first). */
export const inputValidatorCacheSize = 500;

interface Compiled {
  schema: JsonSchema;
  validate: ValidateFunction;
}

/**
 * The tools' input schemas (JSON Schema 2020-12) compiled once per integration version and entry, bounded
 * (lru-cache): a tool called again and again is not compiled again, and a tenant with thousands of tools cannot grow
 * it without end. A dropped entry is removed from Ajv as well, which otherwise keeps every schema it compiled.
 */
export class InputValidators {
  readonly #ajv: Ajv2020;
  readonly #entries: LRUCache<string, Compiled>;

  constructor(maxEntries = inputValidatorCacheSize) {
    // Validation only: no defaults filled in, no types coerced (execute checks the params again, as they are).
    this.#ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, logger: false });
    addFormats(this.#ajv);
    this.#entries = new LRUCache({ max: maxEntries, dispose: (entry) => this.#ajv.removeSchema(entry.schema) });
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The issues of `input` against `schema`, the input schema `tool` is listed with (none when it fits). Throws when
   * the schema does not compile: a catalogue that made it is at fault, not the caller.
   *
   * @example validators.issues(tool, { type: 'object', required: ['id'] }, {}) // [{ path: 'id', message: 'is required' }]
   */
  issues(tool: OfferedTool, schema: JsonSchema, input: Record<string, unknown>): ValidationIssue[] {
    const key = JSON.stringify([tool.integrationId, tool.integrationVersion, tool.entry.name]);
    let compiled = this.#entries.get(key);
    if (!compiled) {
      // A copy without `$id`: Ajv refuses a second schema with an id it holds (another version of the same entry).
      const { $id: _id, ...copy } = schema;
      try {
        compiled = { schema: copy, validate: this.#ajv.compile(copy) };
      } catch (error) {
        this.#ajv.removeSchema(copy);
        throw error;
      }
      this.#entries.set(key, compiled);
    }
    return compiled.validate(input) ? [] : toIssues(compiled.validate.errors ?? []);
  }
}
