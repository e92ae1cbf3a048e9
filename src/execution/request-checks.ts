import type { ValidateFunction } from 'ajv';
import type { ConnectorDefinition, PrimitiveOperation } from '../connectors/connector.ts';
import type { ValidationIssue } from '../core/errors.ts';
import { strictAjv, toIssues } from '../core/validation.ts';

const compiled = new Map<string, ValidateFunction>();

function validatorFor(key: string, schema: object): ValidateFunction {
  let validate = compiled.get(key);
  if (!validate) {
    validate = strictAjv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** The problems of `value` against `schema`, with paths under `prefix` (`outbound.`, `operations.2.data.`). */
export function issuesOf(key: string, schema: object, value: unknown, prefix = ''): ValidationIssue[] {
  const validate = validatorFor(key, schema);
  if (validate(value)) return [];
  return toIssues(validate.errors ?? []).map((i) => ({
    ...i,
    path: i.path === '(root)' ? prefix.replace(/\.$/, '') || i.path : prefix + i.path,
  }));
}

/** The problems of a send's or receive's fields against the connector's request schema, paths under `prefix`. */
export function fieldIssues(
  definition: ConnectorDefinition,
  operation: PrimitiveOperation,
  fields: unknown,
  prefix = '',
): ValidationIssue[] {
  return issuesOf(`${definition.id}:${operation}`, definition.requestSchemas[operation], fields, prefix);
}

export const syncSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { outbound: { type: ['object', 'null'] }, inbound: { type: ['object', 'null'] } },
} as const;

export const batchSchema = {
  type: 'object',
  required: ['operations'],
  additionalProperties: false,
  properties: {
    operations: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        properties: {
          operation: { type: 'string', enum: ['send', 'receive'] },
          type: { type: 'string', enum: ['send', 'receive'] },
          data: { type: 'object' },
        },
      },
    },
    stop_on_error: { type: 'boolean' },
  },
} as const;

export const testSchema = { type: 'object', additionalProperties: false, properties: {} } as const;
