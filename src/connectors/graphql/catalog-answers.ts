import type { JsonSchema } from '../catalog.ts';
import { distinct, type ObjectShape, objectSchema, type Shape, shapeSchema } from './catalog-output.ts';

/**
 * What execute answers in `data` for a catalogue entry (docs/execute.md#graphql-connector), as JSON Schema: `receive`'s
 * records envelope and `send`'s data envelope around the shape of the upstream's `data`. The catalogue's calls give no
 * `records_path` and no `paginate`, so the envelopes have no `pages` and the records follow the default rule
 * (records.ts's `extractRecords`), applied here to shapes instead of values.
 */

const count: JsonSchema = { type: 'integer', minimum: 0 };

/**
 * `receive`'s `data`: `{message_count, data: [records], total_size}`; records of `items` (alternatives, any of which a
 * record may match; none: there never is a record), or of any value when undefined (no schema to read them from).
 */
export function receiveAnswerSchema(items: JsonSchema[] | undefined): JsonSchema {
  let records: JsonSchema = { type: 'array' };
  if (items !== undefined) {
    const alternatives = distinct(items);
    if (alternatives.length === 0) records = { type: 'array', maxItems: 0 };
    else records = { type: 'array', items: alternatives.length === 1 ? alternatives[0] : { anyOf: alternatives } };
  }
  return {
    type: 'object',
    properties: { message_count: count, data: records, total_size: count },
    required: ['message_count', 'data', 'total_size'],
    additionalProperties: false,
  };
}

/**
 * `send`'s `data`: `{message_count, data, response: {data}}` where `data` is the upstream's data object (of `data`, or
 * any object without a schema) and `message_count` counts its non-null root fields (at most `rootFields`).
 */
export function sendAnswerSchema(data: JsonSchema | undefined, rootFields?: number): JsonSchema {
  const object = data ?? { type: 'object' };
  return {
    type: 'object',
    properties: {
      message_count: rootFields === undefined ? count : { ...count, maximum: rootFields },
      data: object,
      response: { type: 'object', properties: { data: object }, required: ['data'], additionalProperties: false },
    },
    required: ['message_count', 'data', 'response'],
    additionalProperties: false,
  };
}

/**
 * The records of an operation's `data` (an object of its root fields): the single root field's value's records when
 * one key is present, the whole object as one record when several are (`minProperties: 2` says so when some keys are
 * optional), none when no key is.
 */
export function rootRecordSchemas(data: Shape): JsonSchema[] {
  if (data.kind !== 'object') return [{}];
  return data.variants.flatMap((variant) => {
    const fields = [...variant.fields.values()];
    const required = fields.filter((field) => !field.optional);
    const records: JsonSchema[] = [];
    if (fields.length >= 2) {
      records.push(required.length >= 2 ? objectSchema(variant) : { ...objectSchema(variant), minProperties: 2 });
    }
    // A key is alone when it is the only required one, or when none is required and the others are left out.
    const alone = required.length === 1 ? required : required.length === 0 ? fields : [];
    for (const field of alone) records.push(...recordSchemas(field.shape));
    return records;
  });
}

/**
 * The records of one value (the default rule): a list → its items; an object with an `edges` list → each edge's
 * `node` (null for an edge that is not an object or has no `node`); with a `nodes` list → its items; null → none;
 * anything else → itself. An object whose `edges` may be null or absent may also fall to the next rule.
 */
export function recordSchemas(value: Shape): JsonSchema[] {
  switch (value.kind) {
    case 'any':
    case 'open':
      return [{}];
    case 'leaf':
      return [value.schema];
    case 'list':
      return [shapeSchema(value.item)];
    case 'object':
      return value.variants.flatMap(variantRecords);
  }
}

function variantRecords(variant: ObjectShape): JsonSchema[] {
  const records: JsonSchema[] = [];
  const edges = variant.fields.get('edges');
  let notEdges = true;
  if (edges !== undefined) {
    const shape = edges.shape;
    if (shape.kind === 'any') records.push({});
    else if (shape.kind === 'list') {
      records.push(...edgeNodes(shape.item));
      notEdges = edges.optional || shape.nullable;
    }
  }
  if (!notEdges) return records;
  const nodes = variant.fields.get('nodes');
  let notNodes = true;
  if (nodes !== undefined) {
    const shape = nodes.shape;
    if (shape.kind === 'any') records.push({});
    else if (shape.kind === 'list') {
      records.push(shapeSchema(shape.item));
      notNodes = nodes.optional || shape.nullable;
    }
  }
  if (notNodes) records.push(objectSchema(variant));
  return records;
}

/** An edge's record: its `node` when the edge is an object with one, else null. */
function edgeNodes(edge: Shape): JsonSchema[] {
  const none: JsonSchema = { type: 'null' };
  if (edge.kind === 'any' || edge.kind === 'open') return [{}];
  if (edge.kind !== 'object') return [none];
  const records = edge.nullable ? [none] : [];
  for (const variant of edge.variants) {
    const node = variant.fields.get('node');
    if (node === undefined || node.optional) records.push(none);
    if (node !== undefined) records.push(shapeSchema(node.shape));
  }
  return records;
}
