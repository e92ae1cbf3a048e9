import type { Tracer } from '@opentelemetry/api';

/** The OpenTelemetry API, loaded only once tracing starts. */
export type OtelApi = typeof import('@opentelemetry/api');

/** What the span helpers need of a running SDK. */
export interface RunningTracing {
  api: OtelApi;
  tracer: Tracer;
}

interface Started extends RunningTracing {
  shutdown(): Promise<void>;
}

/** Set while the SDK runs: the one check every traced path makes (undefined, nothing else happens). */
let running: RunningTracing | undefined;
let started: Promise<Started> | undefined;
/** Apps that started tracing and have not closed: the SDK is process-wide, and shut down when the last one closes. */
let users = 0;

/**
 * Whether the environment asks for traces: `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
 * set and the SDK not disabled (`OTEL_SDK_DISABLED=true`).
 */
export function tracingRequested(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  return env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** The running tracer, or undefined when tracing is off. */
export function runningTracing(): RunningTracing | undefined {
  return running;
}

/**
 * Starts the OpenTelemetry SDK when the environment asks for traces (tracingRequested) and tells whether it did;
 * otherwise loads nothing. Every call that returned true is matched by one stopTracing().
 *
 * @example
 * if (await startTracing()) app.addHook('onClose', () => stopTracing());
 */
export async function startTracing(): Promise<boolean> {
  if (!tracingRequested()) return false;
  users += 1;
  started ??= startSdk();
  try {
    running = await started;
  } catch (error) {
    users -= 1;
    started = undefined;
    throw error;
  }
  return true;
}

/** Ends one startTracing(); the last one shuts the SDK down, exporting the spans still queued. */
export async function stopTracing(): Promise<void> {
  if (users === 0 || started === undefined) return;
  users -= 1;
  if (users > 0) return;
  const sdk = await started;
  running = undefined;
  started = undefined;
  // Unregistered first, so that a later startTracing() can register a new SDK while this one flushes.
  sdk.api.trace.disable();
  sdk.api.context.disable();
  sdk.api.propagation.disable();
  await sdk.shutdown();
}

/**
 * The SDK as its environment variables configure it (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_*, OTEL_BSP_*,
 * OTEL_TRACES_SAMPLER, OTEL_PROPAGATORS…), traces only: OTLP over HTTP with JSON unless OTEL_TRACES_EXPORTER or an
 * OTLP protocol variable chooses otherwise. Metrics stay Prometheus' (/metrics), logs pino's.
 */
async function startSdk(): Promise<Started> {
  const [api, { NodeSDK }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const env = process.env;
  const sdkChoosesExporter = Boolean(
    env.OTEL_TRACES_EXPORTER || env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL,
  );
  // OTEL_SERVICE_NAME or a service.name in OTEL_RESOURCE_ATTRIBUTES wins (the SDK reads both); "interchange" otherwise.
  const namedByEnv = Boolean(env.OTEL_SERVICE_NAME) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(!namedByEnv && { serviceName: 'interchange' }),
    ...(!sdkChoosesExporter && { traceExporter: new OTLPTraceExporter() }),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { api, tracer: api.trace.getTracer('interchange'), shutdown: () => sdk.shutdown() };
}
