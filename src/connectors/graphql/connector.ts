import { credentialsMayGoTo } from '../../credentials/destinations.ts';
import { ApiError, type ValidationIssue } from '../../errors.ts';
import { sendUpstream } from '../../transport/upstream.ts';
import {
  type Connection,
  type ConnectorContext,
  type ConnectorDefinition,
  type ConnectorResult,
  defineConnector,
  type ResolvedIntegration,
} from '../connector.ts';
import { hasVariable, parseOperation } from './document.ts';
import { paginate } from './pagination.ts';
import { countNonNullRootFields, extractRecords, parseRecordsPath } from './records.ts';
import { type GraphqlAnswer, readGraphqlResponse } from './response.ts';
import { configProperties, type ReceiveFields, receiveSchema, type SendFields, sendSchema } from './schemas.ts';
import { resolveGraphqlUrl, withoutCredentials } from './url.ts';

const introspection = '{ __schema { queryType { name } } }';
const defaultMaxPages = 10;

function issuesFrom(check: () => void): ValidationIssue[] {
  try {
    check();
    return [];
  } catch (error) {
    if (error instanceof ApiError && error.code === 'validation_failed')
      return (error.details?.issues as ValidationIssue[]) ?? [];
    throw error;
  }
}

function cursorVariableOf(fields: ReceiveFields): string {
  const fromPaginate = typeof fields.paginate === 'object' ? fields.paginate.cursor_variable : undefined;
  return fromPaginate ?? fields.cursor_variable ?? 'after';
}

/** Everything about a request that can be known wrong before it is sent. */
function checkRequest(...call: ['send', SendFields] | ['receive', ReceiveFields]): ValidationIssue[] {
  if (call[0] === 'send') {
    const send = call[1];
    return issuesFrom(() => parseOperation({ document: send.mutation, field: 'mutation', operationName: send.operation_name }));
  }
  const receive = call[1];
  const issues = issuesFrom(() => {
    const parsed = parseOperation({ document: receive.query, field: 'query', operationName: receive.operation_name });
    const variable = cursorVariableOf(receive);
    if (receive.paginate && !hasVariable(parsed, variable)) {
      throw new ApiError('validation_failed', undefined, {
        issues: [{ path: 'query', message: `paginate needs the query to declare $${variable} (the Relay cursor variable)` }],
      });
    }
  });
  const recordsPath = receive.records_path;
  if (recordsPath !== undefined) issues.push(...issuesFrom(() => parseRecordsPath(recordsPath)));
  return issues;
}

interface Endpoint {
  url: string;
  headers: Readonly<Record<string, string>>;
}

/** The endpoint and headers of each resolved integration (the execute path keeps one per integration version). */
const endpoints = new WeakMap<ResolvedIntegration, Endpoint>();

function endpointOf(integration: ResolvedIntegration): Endpoint {
  let endpoint = endpoints.get(integration);
  if (endpoint) return endpoint;
  const { base_url: baseUrl, token } = integration.config;
  if (typeof baseUrl !== 'string' || baseUrl === '') {
    throw new ApiError('integration_misconfigured', 'The integration has no base_url; set config.base_url to run it.', {
      missing: ['config.base_url'],
    });
  }
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/graphql-response+json, application/json',
    'accept-encoding': 'gzip',
  };
  const url = resolveGraphqlUrl(baseUrl);
  // Every request (pages included) goes to this one URL, on base_url's origin: the rule every request asks holds.
  if (typeof token === 'string' && token !== '' && credentialsMayGoTo(integration, url))
    headers.authorization = `Bearer ${token}`;
  // Frozen: the transport then checks and prepares them once, not on every request.
  endpoint = { url, headers: Object.freeze(headers) };
  endpoints.set(integration, endpoint);
  return endpoint;
}

function connect(integration: ResolvedIntegration, context: ConnectorContext): Connection<SendFields, ReceiveFields> {
  const { url, headers } = endpointOf(integration);
  const timeoutSeconds = integration.config.timeout_seconds;

  async function post(query: string, variables?: Record<string, unknown>, operationName?: string): Promise<GraphqlAnswer> {
    const body = JSON.stringify({ query, variables: variables ?? {}, ...(operationName && { operationName }) });
    const response = await sendUpstream(context.dispatcher, {
      url,
      method: 'POST',
      headers,
      body,
      timeoutMs: Number(timeoutSeconds) * 1000,
      maxBodyBytes: context.upstreamMaxBytes,
      budget: context.budget,
    });
    return readGraphqlResponse(response.status, response.headers, response.body);
  }

  const withErrors = (result: ConnectorResult, errors: unknown[] | undefined): ConnectorResult =>
    errors && errors.length > 0 ? { ...result, errors } : result;

  return {
    async send(fields) {
      const { mutation, variables, operation_name: operationName } = fields;
      const answer = await post(mutation, variables, operationName);
      const messageCount = countNonNullRootFields(answer.data);
      return withErrors(
        { data: { message_count: messageCount, data: answer.data, response: { data: answer.data } }, messageCount },
        answer.errors,
      );
    },

    async receive(fields) {
      const request = fields;
      const { query, variables, operation_name: operationName, records_path: recordsPath } = request;
      if (!request.paginate) {
        const answer = await post(query, variables, operationName);
        const { records, totalSize } = extractRecords(answer.data, recordsPath);
        return withErrors(
          { data: { message_count: records.length, data: records, total_size: totalSize }, messageCount: records.length },
          answer.errors,
        );
      }
      const maxPages = (typeof request.paginate === 'object' ? request.paginate.max_pages : undefined) ?? defaultMaxPages;
      const variable = cursorVariableOf(request);
      // The first page goes with the caller's variables as given (a starting cursor included).
      const result = await paginate(
        (after) => post(query, after === null ? variables : { ...variables, [variable]: after }, operationName),
        {
          recordsPath,
          maxPages,
        },
      );
      return withErrors(
        {
          data: { message_count: result.records.length, data: result.records, total_size: result.totalSize, pages: result.pages },
          messageCount: result.records.length,
        },
        result.errors,
      );
    },

    async test() {
      const started = performance.now();
      const answer = await post(introspection);
      const schema = (answer.data as { __schema?: { queryType?: { name?: string } } } | null)?.__schema;
      return {
        data: {
          message: 'GraphQL connection test succeeded',
          details: {
            api_base_url: withoutCredentials(url),
            query_type: schema?.queryType?.name ?? null,
            latency_ms: Math.round(performance.now() - started),
          },
        },
        messageCount: 0,
      };
    },
  };
}

/** GraphQL over HTTP POST (API.md section 5). */
export const graphqlConnector: ConnectorDefinition = defineConnector<typeof sendSchema, typeof receiveSchema>({
  id: 'graphql-1.0.0',
  configProperties,
  secretFields: ['token'],
  urlFields: ['base_url'],
  defaults: { timeout_seconds: 30 },
  offers: ['send', 'receive', 'sync', 'batch', 'test'],
  requestSchemas: { send: sendSchema, receive: receiveSchema },
  checkRequest,
  connect,
});
