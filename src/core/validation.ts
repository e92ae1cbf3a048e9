import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ValidationIssue } from './errors.ts';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  addFormats(ajv);
  return ajv;
}

// JSON bodies are typed strictly ("30" is not a number); query and path values are text and are parsed.
export const strictAjv = makeAjv(false);
const coercingAjv = makeAjv('array');

/**
 * Each route's validators are compiled when the route is first called, not at start: compiling all of them (about
 * 10 MiB of generated code and Ajv's state) cost every instance memory for routes it may never serve. Fastify reads
 * a failed validation's `errors` from the function it was given, so they are copied over from the compiled one.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown): boolean => {
    compiled ??= (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

/** One issue per Ajv error, with a dotted path a caller can find in what it sent (`config.base_url`). */
export function toIssues(errors: readonly ErrorObject[]): ValidationIssue[] {
  return errors.map((e) => {
    const segments = e.instancePath
      .split('/')
      .slice(1)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required') segments.push(String(params.missingProperty));
    if (e.keyword === 'additionalProperties') segments.push(String(params.additionalProperty));
    const message =
      e.keyword === 'additionalProperties'
        ? 'is not a known field'
        : e.keyword === 'required'
          ? 'is required'
          : e.keyword === 'enum'
            ? `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
            : (e.message ?? 'is invalid');
    return { path: segments.join('.') || '(root)', message };
  });
}
