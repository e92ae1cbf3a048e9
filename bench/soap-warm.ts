/**
 * Warm SOAP calls, ours against node-soap's, each client in a process of its own (bench/run.ts runs it):
 *   node bench/soap-warm.ts engine|interchange|node-soap WSDL_URL ENDPOINT_URL METHOD PARAMS_JSON CALLS CONCURRENCY
 * (PARAMS_JSON `numbers:N` is `{"numbers": [0, …, N-1]}`, SumList's large request.)
 * Prints {calls, seconds, perSecond, cpuMicrosPerCall, answer} (answer: the last answer's JSON, cut to 200 characters): after the WSDL is loaded and one call made, CALLS calls,
 * CONCURRENCY at a time, against ENDPOINT_URL (a local upstream answering at once, so that the client is what is
 * measured); CPU is this process's, user and system.
 * - engine: the SOAP connector alone, as the execute path binds it for each call (src/execution/service.ts's
 *   BoundRun): connected with a fresh budget and credentials, prepared (the call checked against the WSDL), sent
 *   through the egress-checked dispatcher, the answer read and shaped. What node-soap's client does, and no more.
 * - interchange: the app on a temp SQLite file (every call authenticated, rate-limited and logged, as a service
 *   runs it), execute send through app.inject: WSDL mode, the WSDL cached.
 * - node-soap: a client built once by createClientAsync, then METHODAsync.
 */

import pino from 'pino';
import { createClientAsync } from 'soap';
import type { ConnectorContext, SharedConnectorContext } from '../src/connectors/connector.ts';
import { soapConnector } from '../src/connectors/soap/connector.ts';
import { OAuth2Sources } from '../src/credentials/oauth2-sources.ts';
import { upstreamCredentials } from '../src/credentials/upstream-credentials.ts';
import { createEgressDispatcher } from '../src/egress/dispatcher.ts';
import { IntegrationDispatchers } from '../src/egress/integration-dispatchers.ts';
import { createEgressPolicy } from '../src/egress/policy.ts';
import { settingsOf } from '../src/integrations/settings.ts';
import { SecretMatcher } from '../src/secrets/secret-matcher.ts';
import { AnswerWorkers } from '../src/transport/answer-workers.ts';
import { ExecuteBudget } from '../src/transport/budget.ts';
import { withSoapApp } from './soap-app.ts';

const [mode, wsdlUrl, endpoint, method, paramsJson, callsText, concurrencyText] = process.argv.slice(2);
// `numbers:N` stands for `{"numbers": [0, 1, …, N-1]}`, a request too large for a command line.
const numbersArgument = /^numbers:(\d+)$/.exec(paramsJson ?? '');
const params = numbersArgument
  ? { numbers: Array.from({ length: Number(numbersArgument[1]) }, (_, i) => i) }
  : JSON.parse(paramsJson ?? '{}');
const calls = Number(callsText ?? 2000);
const concurrency = Number(concurrencyText ?? 4);

/** Runs `call` `calls` times, `concurrency` at a time; the wall time and this process's CPU time. */
async function measure(call: () => Promise<unknown>): Promise<{ seconds: number; cpuMicros: number; answer: unknown }> {
  let answer = await call();
  let left = calls;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) answer = await call();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { seconds, cpuMicros: used.user + used.system, answer };
}

function interchange() {
  const payload = JSON.stringify({ operation: 'send', method, params });
  return withSoapApp(wsdlUrl, endpoint, (execute) => measure(() => execute(payload)));
}

async function engine() {
  const policy = createEgressPolicy({ allowPrivate: true });
  const dispatcher = createEgressDispatcher(policy, {});
  const workers = new AnswerWorkers();
  const shared: SharedConnectorContext = {
    dispatcher,
    upstreamMaxBytes: 10 * 1024 * 1024,
    log: pino({ level: 'silent' }),
    workers,
    oauth2: new OAuth2Sources(),
    dispatchers: new IntegrationDispatchers({ policy, shared: dispatcher, egress: {} }),
  };
  const definition = soapConnector({ wsdlCacheSize: 10, wsdlCacheTtlMs: 3_600_000 });
  const integration = {
    tenantId: 'bench',
    id: 'w',
    version: 1,
    config: { endpoint_url: wsdlUrl, service_url: endpoint, timeout_seconds: 60, soap_version: '1.1' },
    settings: settingsOf(definition.defaults, { timeout_seconds: 60 }),
    credentialOrigins: new Set([new URL(wsdlUrl).origin, new URL(endpoint).origin]),
  };
  const credentials = upstreamCredentials(integration, {
    shorthand: undefined,
    oauth2: shared.oauth2,
    tokenRequest: { timeoutMs: 60_000, maxBodyBytes: shared.upstreamMaxBytes },
  });
  const fields = { method, params };
  const result = await measure(async () => {
    const budget = new ExecuteBudget({ maxBytes: 32 * 1024 * 1024, deadlineMs: 60_000 });
    const context: ConnectorContext = { ...shared, budget, secrets: SecretMatcher.none, credentials: credentials(budget) };
    const connection = definition.connect(integration, context);
    const issues = (await connection.prepare?.('send', fields)) ?? [];
    if (issues.length > 0) throw new Error(JSON.stringify(issues));
    return (await connection.send(fields)).data;
  });
  await workers.close();
  return result;
}

async function nodeSoap() {
  const client = await createClientAsync(wsdlUrl, { endpoint });
  const call = (client as unknown as Record<string, (a: object) => Promise<[unknown]>>)[`${method}Async`].bind(client);
  return measure(async () => (await call(params))[0]);
}

const result = mode === 'engine' ? await engine() : mode === 'interchange' ? await interchange() : await nodeSoap();
console.log(
  JSON.stringify({
    calls,
    seconds: result.seconds,
    perSecond: calls / result.seconds,
    cpuMicrosPerCall: result.cpuMicros / calls,
    answer: JSON.stringify(result.answer).slice(0, 200),
  }),
);
process.exit(0);
