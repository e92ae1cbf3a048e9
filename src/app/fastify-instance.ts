import { randomUUID } from 'node:crypto';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from '../config/config.ts';
import type { ConnectorRegistry } from '../connectors/registry.ts';
import { ApiError } from '../core/errors.ts';
import { validatorCompiler } from '../core/validation.ts';
import { answerConnect, clientErrorHandler, frameworkErrors, maxParamLength } from '../http/error-handler.ts';
import { parseJsonBody } from '../http/json-body.ts';
import { RequestLogger } from '../http/request-logger.ts';

const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Replies are serialized with their route's response schema (fast-json-stringify), each compiled when its route first
 * answers with that status rather than at start-up: the ~60 success serializers (those with a `oneOf` build an Ajv
 * instance each) held 19 MiB from start. Failures are not compiled at all: every failure is `errorBody`'s one shape
 * (tested against the documented `Error` schema), and ~180 failure serializers held 7 MiB more.
 */
const successSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    if (/^[45]/.test(String(route.httpStatus))) return (value: unknown) => JSON.stringify(value);
    let serialize: ((value: unknown) => string) | undefined;
    return (value: unknown) => {
      serialize ??= compile(route) as (value: unknown) => string;
      return serialize(value);
    };
  };
};

/**
 * Paths whose values are secrets, never logged: the caller's credentials, and every connector's secret config fields
 * wherever a logged object holds them (`*.token`, `*.config.token`).
 */
function redactedPaths(registry: ConnectorRegistry): string[] {
  // A dot path (`auth.password`) is a path in the logged object too.
  const fields = registry.secretFields.map((field) =>
    /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(field) ? `.${field}` : `[${JSON.stringify(field)}]`,
  );
  return [
    'req.headers["x-api-key"]',
    'req.headers.authorization',
    '*.key',
    ...fields.flatMap((field) => [`*${field}`, `*.config${field}`]),
  ];
}

/**
 * The Fastify instance: its logger (secrets redacted), timeouts, request ids and serializers; the hooks every request
 * passes (its id on the answer, a 503 and `connection: close` while the instance closes); JSON as the only body type.
 */
export async function createFastify(
  config: Config,
  registry: ConnectorRegistry,
  logStream: NodeJS.WritableStream | undefined,
): Promise<FastifyInstance> {
  const requestTimeoutMs = config.requestTimeoutSeconds * 1000;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: redactedPaths(registry), censor: '[redacted]' },
      // LOG_FORMAT=pretty: pino-pretty, loaded only then, so the JSON default pays nothing for it; it writes to the
      // caller's stream when there is one. Synchronous, so the last lines before an exit are not lost.
      ...(config.logFormat === 'pretty'
        ? {
            stream: (await import('pino-pretty')).default({
              destination: logStream ?? 1,
              sync: true,
              translateTime: 'SYS:HH:MM:ss.l',
              ignore: 'pid,hostname',
            }),
          }
        : logStream && { stream: logStream }),
    },
    // Each request's logger makes its pino child only when it writes (src/http/request-logger.ts).
    childLoggerFactory: (parent, bindings, childOptions) => new RequestLogger(parent, bindings, childOptions),
    bodyLimit: config.bodyLimit,
    // One line per request when it is answered, with who, what and how it ended (src/http/request-log.ts). The
    // request's id is bound to its logger as `request_id`, the name the API gives it, not Fastify's `reqId` beside it.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // A request must arrive whole (headers and body) within IX_REQUEST_TIMEOUT_SECONDS: a client that trickles
    // bytes cannot hold a connection. Node checks its connections every `connectionsCheckingInterval` (30 s by
    // default, which would double the bound); 1 s keeps the answer near the limit. The 408 is clientErrorHandler's.
    requestTimeout: requestTimeoutMs,
    http: { headersTimeout: requestTimeoutMs, requestTimeout: requestTimeoutMs, connectionsCheckingInterval: 1000 },
    // Requests that arrive while the instance shuts down get the contract's 503 (the onRequest hook below).
    return503OnClosing: false,
    trustProxy: config.trustProxy,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && saneRequestId.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength },
    schemaController: { compilersFactory: { buildSerializer: successSerializers } },
    clientErrorHandler,
    frameworkErrors,
  });

  app.server.on('connect', answerConnect);
  app.setValidatorCompiler(validatorCompiler);
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // While closing, every answer ends its connection: a keep-alive connection busy when close() began would
  // otherwise hold the shutdown until its keep-alive timeout (72 s). Hooks on every request are synchronous
  // (callback style): an async hook costs a promise and a turn of the microtask queue per request.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!closing) return done();
    reply.header('retry-after', '5');
    done(new ApiError('service_unavailable', 'This instance is shutting down; retry on another instance.'));
  });

  // JSON is the only body type; an empty body is no body. Depth, NUL, lone surrogates and __proto__ tricks are
  // refused at parse time, before any code recurses over the value.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    try {
      done(null, parseJsonBody(body as Buffer, config.maxJsonDepth));
    } catch (error) {
      done(error as ApiError, undefined);
    }
  });
  return app;
}
