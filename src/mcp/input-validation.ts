import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import type { JsonSchema } from '../connectors/catalog.ts';
import type { ValidationIssue } from '../core/errors.ts';
import { toIssues } from '../core/validation.ts';
import type { OfferedTool } from './backend.ts';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/** How many tools' compiled input validators are kept at most (the least recently used is dropped first). */
export const inputValidatorCacheSize = 500;

/** The largest compiled pattern a tool's schema is checked with; a larger one matches anything (execute decides). */
export const maxSchemaPatternProgram = 5000;
/** The most a pattern check may cost (program size × text length); past it, not checked here (execute decides). */
export const maxSchemaPatternSteps = 1_000_000;

/**
 * `pattern` keywords matched by RE2 (re2js), in time linear in the text, never JavaScript's backtracking RegExp: a
 * tool's schema holds a WSDL's facet patterns, which its author writes. A pattern RE2 cannot compile, or one too large
 * to check on a text, passes: the schema is a first check, and execute's own params check is the one that decides.
 */
const linearRegExp = Object.assign(
  (pattern: string): { test(text: string): boolean; toString(): string } => {
    let compiled: RE2JS | undefined;
    try {
      // The catalogue writes code points as JavaScript's \u{…}; RE2 spells them \x{…}.
      compiled = RE2JS.compile(pattern.replace(/\\u\{/g, '\\x{'));
      if (compiled.programSize() > maxSchemaPatternProgram) compiled = undefined;
    } catch {
      compiled = undefined;
    }
    const program = compiled?.programSize() ?? 0;
    return {
      test: (text) => compiled === undefined || text.length * program > maxSchemaPatternSteps || compiled.matcher(text).find(),
      // Ajv keys its compiled patterns by this text.
      toString: () => `/${pattern}/`,
    };
  },
  { code: 'linearRegExp' },
);

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
    // Shared definitions compiled once, not again at every use (inlineRefs: an EWS schema took over 1 s, 170 ms without).
    this.#ajv = new Ajv2020({
      allErrors: true,
      strict: false,
      validateFormats: true,
      logger: false,
      inlineRefs: false,
      code: { regExp: linearRegExp },
    });
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
