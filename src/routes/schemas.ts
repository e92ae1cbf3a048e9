/** JSON-schema pieces shared by the routes (they also feed the OpenAPI document). */

export const pageQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, at most 100.' },
  cursor: { type: 'string', maxLength: 512, description: 'next_cursor from the previous page.' },
} as const;

/** 1–128 characters, no control characters; travels as one URL-encoded path segment. */
export const objectId = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]+$' } as const;

export const idParams = (name: string) => ({ type: 'object', required: [name], properties: { [name]: objectId } }) as const;

export const security = [{ ApiKey: [], TenantId: [] }];
