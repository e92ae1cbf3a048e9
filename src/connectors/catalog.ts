/**
 * The operation catalogue (docs/catalog.md, docs/catalog.md): what a connector knows of an upstream's operations, as typed
 * descriptions. Each connector compiles its own entries (soap/catalog.ts, graphql/catalog.ts); the execution layer
 * adds the integration's `catalog` settings; the routes and the MCP server show them.
 */

/** A JSON Schema 2020-12 object, self-contained (`$defs` allowed, no remote `$ref`), `$schema` left out. */
export type JsonSchema = { [keyword: string]: unknown };

/** One operation as `GET /integrations/{id}/operations` shows it. */
export interface CatalogEntry {
  name: string;
  /** `read` when running it changes nothing upstream (a GraphQL query, a SOAP operation listed in `read_operations`). */
  kind: 'read' | 'write';
  description: string;
  /** The object a call of the entry takes: the SOAP params, the GraphQL variables (and a root field's `selection`). */
  input_schema: JsonSchema;
  /** The execute answer's `data` for the entry. */
  output_schema: JsonSchema;
}

/** An entry with how execute runs it: the fields of the execute request beside `operation`. */
export interface CatalogOperation extends CatalogEntry {
  /**
   * The execute request's fields (without `operation`) for a call with `input` (checked by execute, not here):
   * e.g. `{method, service, port, input, params: input}` for SOAP, `{query, operation_name, variables: input}` for a
   * GraphQL document.
   */
  request(input: Record<string, unknown>): Record<string, unknown>;
}

/** The most characters of upstream text (WSDL documentation, GraphQL descriptions) a description keeps. */
export const maxDescriptionLength = 1000;

/**
 * Upstream text as a description an agent may read: control characters (C0 but tab and newline, DEL, C1, the bidi
 * controls and zero-width characters) removed, runs of blank lines and spaces folded, trimmed, and cut at
 * `maxDescriptionLength` characters (with "…"). The upstream writes it: it is data, never instructions.
 *
 * @example cleanDescription('Adds\u0000 two\n\n\n\nnumbers.  ') // 'Adds two\n\nnumbers.'
 */
export function cleanDescription(text: string | undefined): string {
  if (text === undefined) return '';
  const cleaned = text
    .replace(/\r\n?/g, '\n')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (cleaned.length <= maxDescriptionLength) return cleaned;
  // Not in the middle of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(cleaned[maxDescriptionLength - 2] ?? '')
    ? maxDescriptionLength - 2
    : maxDescriptionLength - 1;
  return `${cleaned.slice(0, end)}…`;
}
