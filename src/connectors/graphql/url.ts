import { ApiError } from '../../core/errors.ts';

/**
 * The GraphQL endpoint for an integration's `base_url` (docs/execute.md#endpoint-url): when the URL's
 * path does not contain `/graphql`, `/graphql` is appended to the path with exactly one slash,
 * keeping the query string; otherwise the URL is used as given. The fragment is dropped (it is
 * never sent over HTTP). Only the path counts: `graphql` in the host or query string does not.
 *
 * Decisions where the contract is silent:
 * - "contains" is literal: `/graphqlx` and `/api/graphql.json` contain `/graphql`, `/my-graphql` does not.
 * - The match ignores case (`/GraphQL` is used as given): appending to it could only produce a wrong URL.
 * - The path is matched as written, percent-encoding included (`/%67raphql` does not contain `/graphql`).
 * - The result is the WHATWG serialisation: host lower-cased, default port dropped; credentials kept.
 *
 * @example resolveGraphqlUrl('https://h/api?x=1') // 'https://h/api/graphql?x=1'
 * @throws ApiError `integration_misconfigured` when the URL is not an absolute http(s) URL.
 */
export function resolveGraphqlUrl(baseUrl: string): string {
  const url = parseHttpUrl(baseUrl);
  url.hash = '';
  if (!url.pathname.toLowerCase().includes('/graphql')) {
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/graphql`;
  }
  return url.href;
}

/**
 * The URL without its user name and password, for showing it back (`test`'s `api_base_url`).
 *
 * @example withoutCredentials('https://u:p@h/graphql') // 'https://h/graphql'
 */
export function withoutCredentials(url: string): string {
  const parsed = parseHttpUrl(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

function parseHttpUrl(value: string): URL {
  const url = URL.parse(value);
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ApiError('integration_misconfigured', 'The integration base_url is not an absolute http or https URL.', {
      field: 'config.base_url',
    });
  }
  return url;
}
