import type { ValidationIssue } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';

/**
 * An integration's `catalog` field (docs/catalog.md, docs/catalog.md): whether its operations are offered to AI agents
 * (MCP) and how its catalogue reads. Stored as written; read with every field at its default (`catalogSettings`).
 */
export interface CatalogSettings {
  /** Offered as MCP tools. */
  readonly mcp: boolean;
  /** Entries of kind `write` are offered as tools too. */
  readonly allow_writes: boolean;
  /** Entry names that change nothing upstream (a WSDL cannot say): kind `read`. */
  readonly read_operations: readonly string[];
  /** GraphQL: the integration's saved operations, each an entry. */
  readonly documents: readonly CatalogDocument[];
  /** GraphQL: every root Query and Mutation field an entry too. */
  readonly root_fields: boolean;
  /** An entry's description in place of the upstream's text, by entry name. */
  readonly descriptions: Readonly<Record<string, string>>;
}

export interface CatalogDocument {
  name: string;
  document: string;
  description?: string;
}

/** Entry names listed in `read_operations` or `descriptions`, at most (docs/limits.md#catalogue). */
export const maxCatalogNames = 2000;
/** The longest entry name `read_operations` and `descriptions` take. */
export const maxEntryNameLength = 256;
/** The longest description an integration may give an entry, in characters. */
export const maxGivenDescriptionLength = 1000;

const fields = ['mcp', 'allow_writes', 'read_operations', 'documents', 'root_fields', 'descriptions'] as const;

/** The settings with every field at its default: nothing offered to agents, no writes, every SOAP operation a write. */
export const defaultCatalog: CatalogSettings = Object.freeze({
  mcp: false,
  allow_writes: false,
  read_operations: [],
  documents: [],
  root_fields: false,
  descriptions: {},
});

/** The stored `catalog` with every missing field at its default. */
export function catalogSettings(stored: Readonly<Record<string, unknown>>): CatalogSettings {
  return { ...defaultCatalog, ...stored } as CatalogSettings;
}

/**
 * `written` over `stored` as PATCH merges `config`: a field given replaces the stored one, `null` puts it back to its
 * default, a field left out is kept; `descriptions` merges name by name (a name given `null` is removed).
 */
export function mergeCatalog(
  stored: Readonly<Record<string, unknown>>,
  written: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored };
  for (const [field, value] of Object.entries(written)) {
    if (value === null) delete merged[field];
    else if (field === 'descriptions' && isJsonObject(value)) {
      const kept = isJsonObject(stored.descriptions) ? stored.descriptions : {};
      const descriptions: Record<string, unknown> = { ...kept, ...value };
      for (const [name, text] of Object.entries(value)) if (text === null) delete descriptions[name];
      merged.descriptions = descriptions;
    } else merged[field] = value;
  }
  return merged;
}

/**
 * Every problem of a written `catalog` (after a PATCH's merge), each with its path under `catalog`; `documents` is the
 * connector's to check (connectors/graphql/catalog.ts), and only a connector that has documents or root fields
 * (`graphql`) takes them.
 */
export function catalogIssues(value: unknown, connectorTakes: { documents: boolean }): ValidationIssue[] {
  if (!isJsonObject(value)) return [{ path: 'catalog', message: 'must be an object' }];
  const issues: ValidationIssue[] = [];
  for (const field of Object.keys(value)) {
    if (!(fields as readonly string[]).includes(field)) {
      issues.push({ path: `catalog.${field}`, message: `is not a catalog field; fields: ${fields.join(', ')}` });
    }
  }
  for (const field of ['mcp', 'allow_writes', 'root_fields'] as const) {
    if (value[field] !== undefined && value[field] !== null && typeof value[field] !== 'boolean') {
      issues.push({ path: `catalog.${field}`, message: 'must be true or false' });
    }
  }
  if (!connectorTakes.documents) {
    for (const field of ['documents', 'root_fields'] as const) {
      const given = value[field];
      if (given !== undefined && given !== null && given !== false && !(Array.isArray(given) && given.length === 0)) {
        issues.push({ path: `catalog.${field}`, message: 'is for GraphQL integrations only' });
      }
    }
  }
  const names = value.read_operations;
  if (names !== undefined && names !== null) {
    if (!Array.isArray(names)) issues.push({ path: 'catalog.read_operations', message: 'must be a list of entry names' });
    else {
      if (names.length > maxCatalogNames) {
        issues.push({ path: 'catalog.read_operations', message: `may list at most ${maxCatalogNames} names` });
      }
      names.slice(0, maxCatalogNames).forEach((name, i) => {
        if (typeof name !== 'string' || name.length === 0 || name.length > maxEntryNameLength) {
          issues.push({
            path: `catalog.read_operations[${i}]`,
            message: `must be an entry name of 1 to ${maxEntryNameLength} characters`,
          });
        }
      });
    }
  }
  const descriptions = value.descriptions;
  if (descriptions !== undefined && descriptions !== null) {
    if (!isJsonObject(descriptions))
      issues.push({ path: 'catalog.descriptions', message: 'must be an object of entry name → text' });
    else {
      const entries = Object.entries(descriptions);
      if (entries.length > maxCatalogNames) {
        issues.push({ path: 'catalog.descriptions', message: `may describe at most ${maxCatalogNames} entries` });
      }
      for (const [name, text] of entries.slice(0, maxCatalogNames)) {
        if (name.length > maxEntryNameLength) {
          issues.push({ path: 'catalog.descriptions', message: `names an entry of more than ${maxEntryNameLength} characters` });
        } else if (typeof text !== 'string' || text.length > maxGivenDescriptionLength) {
          issues.push({
            path: `catalog.descriptions.${name}`,
            message: `must be a text of at most ${maxGivenDescriptionLength} characters`,
          });
        }
      }
    }
  }
  return issues;
}
