/**
 * What an execute call named, for its record and the executions list (docs/execute.md#the-executions-log): the SOAP
 * `method`, else the GraphQL `operation_name`, else the name of the document's operation (`query GetOrder { … }`), else
 * its first root field (`{ orders { id } }`). Only the document's first 2,000 characters are read, by a pattern with no
 * backtracking to speak of; nothing of the body is kept but this name, at most 200 characters.
 */

const maxLength = 200;
const readChars = 2000;
const name = '[_A-Za-z][_0-9A-Za-z]*';
const namedOperation = new RegExp(`^(?:query|mutation|subscription)\\s+(${name})`);
const firstField = new RegExp(
  `^(?:(?:query|mutation|subscription)\\s*)?(?:\\([^)]*\\)\\s*)?(?:@${name}\\s*)*\\{\\s*(?:${name}\\s*:\\s*)?(${name})`,
);

const bounded = (value: string) => value.slice(0, maxLength);

export function operationNameOf(fields: Readonly<Record<string, unknown>>): string | null {
  if (typeof fields.method === 'string' && fields.method !== '') return bounded(fields.method);
  if (typeof fields.operation_name === 'string' && fields.operation_name !== '') return bounded(fields.operation_name);
  const document = typeof fields.query === 'string' ? fields.query : fields.mutation;
  if (typeof document !== 'string') return null;
  // Comments and commas are ignored tokens in GraphQL: dropped, so the patterns see the first token.
  const text = document
    .slice(0, readChars)
    .replace(/#[^\n\r]*/g, ' ')
    .replaceAll(',', ' ')
    .trim();
  return namedOperation.exec(text)?.[1] ?? firstField.exec(text)?.[1] ?? null;
}
