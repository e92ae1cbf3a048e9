/**
 * The parts of the execution core, each built alone with fakes of what it names (src/execution/service.ts's facade
 * wires the real ones): admission, the recorder and the runner.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { ConnectorResult } from '../../src/connectors/connector.ts';
import { ApiError } from '../../src/core/errors.ts';
import { Admission } from '../../src/execution/admission.ts';
import type { BoundRun, Resolved } from '../../src/execution/bound-run.ts';
import type { ExecuteCall } from '../../src/execution/call.ts';
import type { ExecutionEvents } from '../../src/execution/events.ts';
import { ExecutionRecorder } from '../../src/execution/recorder.ts';
import type { Outcome } from '../../src/execution/reply.ts';
import { replyFor } from '../../src/execution/reply.ts';
import type { IntegrationResolver } from '../../src/execution/resolver.ts';
import { ExecutionRunner } from '../../src/execution/runner.ts';
import type { CircuitBreakers } from '../../src/resilience/breaker.ts';
import { FairTurns } from '../../src/resilience/fair-turns.ts';
import { IntegrationConcurrency } from '../../src/resilience/integration-concurrency.ts';
import type { ResilienceMetrics } from '../../src/resilience/metrics.ts';
import { defaultRetrySettings, type RetrySettings } from '../../src/resilience/retry.ts';
import { SecretMatcher } from '../../src/secrets/secret-matcher.ts';
import type { StorageHealth } from '../../src/storage/availability.ts';
import type { ExecutionLog } from '../../src/storage/execution-log.ts';
import type { Execution } from '../../src/storage/executions.ts';
import type { StoredIntegration } from '../../src/storage/integrations.ts';
import type { ExecuteBudget } from '../../src/transport/budget.ts';

const log = pino({ level: 'silent' });

/** The metrics a part reports to, as calls it saw. */
function fakeResilience(): ResilienceMetrics & { seen: string[] } {
  const seen: string[] = [];
  const note =
    (name: string) =>
    (...args: unknown[]) => {
      seen.push(`${name} ${args.join(' ')}`);
    };
  return {
    seen,
    retried: note('retried'),
    refusedOpen: note('refusedOpen'),
    opened: note('opened'),
    concurrencyFull: note('concurrencyFull'),
  } as unknown as ResilienceMetrics & { seen: string[] };
}

const stored = (config: Record<string, unknown> = {}): StoredIntegration => ({
  tenant_id: 'acme',
  id: 'erp',
  name: 'ERP',
  connector: 'graphql-1.0.0',
  config,
  secrets: {},
  catalog: {},
  version: 1,
  created_at: '2026-11-29T00:00:00.000Z',
  updated_at: '2026-11-29T00:00:00.000Z',
});

const call = (operation: ExecuteCall['operation'] = 'receive'): ExecuteCall => ({
  tenantId: 'acme',
  keyId: 'key_1',
  userId: null,
  integrationId: 'erp',
  operation,
  fields: { query: '{ a }' },
  requestId: 'req-1',
  log,
});

const apiCode = (error: unknown) => (error instanceof ApiError ? [error.code, error.details, error.retryAfterSeconds] : error);

describe('Admission', () => {
  const admission = (available: boolean, resilience = fakeResilience()) =>
    new Admission({
      tenantConcurrency: 2,
      storageHealth: { available } as StorageHealth,
      integrationSlots: new IntegrationConcurrency(),
      resilience,
    });

  test('storage that cannot take the record refuses the call before anything: 503, reason storage', () => {
    assert.throws(
      () => admission(false).tenant('acme'),
      (error) => error instanceof ApiError && error.code === 'service_unavailable' && error.details?.reason === 'storage',
    );
  });

  test('a tenant has IX_TENANT_CONCURRENCY slots: one more is 429 concurrency with Retry-After 1; a release frees one', () => {
    const gate = admission(true);
    const first = gate.tenant('acme');
    gate.tenant('acme');
    let refused: unknown;
    try {
      gate.tenant('acme');
    } catch (error) {
      refused = error;
    }
    assert.deepEqual(apiCode(refused), ['rate_limited', { reason: 'concurrency', limit: 2 }, 1]);
    assert.ok(gate.tenant('globex'), 'another tenant has its own');
    first();
    assert.ok(gate.tenant('acme'));
  });

  test('an integration without max_concurrency takes no slot; one whose slots stay taken 1 s is 429, counted', async () => {
    const resilience = fakeResilience();
    const gate = admission(true, resilience);
    assert.equal(gate.integration('acme', stored()), undefined);
    const capped = stored({ max_concurrency: 1 });
    const held = await (gate.integration('acme', capped) as Promise<() => void>);
    const refused = await (gate.integration('acme', capped) as Promise<() => void>).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.deepEqual(apiCode(refused), ['rate_limited', { reason: 'integration_concurrency', limit: 1 }, 1]);
    assert.deepEqual(resilience.seen, ['concurrencyFull graphql-1.0.0 refused']);
    held();
    (await (gate.integration('acme', capped) as Promise<() => void>))();
  });
});

describe('ExecutionRecorder', () => {
  const outcome = (result: ConnectorResult | undefined, thrown?: unknown): Outcome => ({
    executionId: 'exe_1',
    connector: 'graphql-1.0.0',
    result,
    thrown,
    reachedUpstream: false,
    attempts: 1,
    upstreamMs: 3,
    totalMs: 4.6,
    secrets: SecretMatcher.none,
  });

  function recorder(wanted: boolean) {
    const rows: Array<[string, Execution]> = [];
    const events: Array<[string, string]> = [];
    const log = {
      record: (tenantId: string, execution: Execution) => rows.push([tenantId, execution]),
    } as unknown as ExecutionLog;
    const sink = {
      wanted: () => wanted,
      finished: (tenantId: string, execution: Execution) => events.push([tenantId, execution.id]),
    } as unknown as ExecutionEvents;
    return { rows, events, recorder: new ExecutionRecorder({ executions: log, events: sink }) };
  }

  test('a synchronous call’s record: its ids, status, counts and time; its event only for a tenant with endpoints', () => {
    for (const wanted of [false, true]) {
      const { rows, events, recorder: r } = recorder(wanted);
      const done = outcome({ data: { message_count: 2, data: [1, 2] }, messageCount: 2 });
      r.record(call(), done, replyFor(done, 'req-1', log), '2026-11-29T00:00:00.000Z', 'sync');
      assert.equal(rows.length, 1);
      const [tenantId, row] = rows[0];
      assert.equal(tenantId, 'acme');
      assert.deepEqual(
        [row.id, row.integration_id, row.operation, row.mode, row.status, row.http_status, row.message_count, row.duration_ms],
        ['exe_1', 'erp', 'receive', 'sync', 'succeeded', 200, 2, 5],
      );
      assert.deepEqual([row.api_key_id, row.request_id, row.error_code], ['key_1', 'req-1', null]);
      assert.deepEqual(events, wanted ? [['acme', 'exe_1']] : []);
    }
  });

  test('a failure’s record carries its code and status', () => {
    const { rows, recorder: r } = recorder(false);
    const failed = outcome(undefined, new ApiError('upstream_timeout', 'slow', { timeout_seconds: 1 }));
    r.record(call(), failed, replyFor(failed, 'req-1', log), '2026-11-29T00:00:00.000Z', 'sync');
    assert.deepEqual([rows[0][1].status, rows[0][1].http_status, rows[0][1].error_code], ['failed', 504, 'upstream_timeout']);
  });
});

describe('ExecutionRunner', () => {
  const breakers = (circuit: 'closed' | 'open') =>
    ({
      admit: async () => ({ ok: true, quiet: true, trial: false }),
      state: async () => circuit,
      record: async () => false,
    }) as unknown as CircuitBreakers;

  const runner = (resolver: Partial<IntegrationResolver>, circuit: 'closed' | 'open' = 'closed') =>
    new ExecutionRunner({
      executeMaxBytes: 1024,
      turns: new FairTurns(),
      breakers: breakers(circuit),
      resilience: fakeResilience(),
      resolver: resolver as IntegrationResolver,
    });

  test('an integration that cannot be bound ends as its failure, never a rejection; nothing was sent', async () => {
    const misconfigured = new ApiError('integration_misconfigured', 'no base_url');
    const ran = await runner({
      resolve: () => {
        throw misconfigured;
      },
    }).run(call(), stored(), 'exe_2', 5);
    assert.equal(ran.thrown, misconfigured);
    assert.deepEqual(
      [ran.executionId, ran.connector, ran.result, ran.reachedUpstream],
      ['exe_2', 'graphql-1.0.0', undefined, false],
    );
  });

  test('test: its failure carries the circuit breaker’s state, as the connection test reports it', async () => {
    const ran = await runner(
      {
        resolve: () => {
          throw new ApiError('integration_misconfigured', 'no base_url');
        },
      },
      'open',
    ).run(call('test'), stored(), 'exe_3', 5);
    assert.ok(ran.thrown instanceof ApiError);
    assert.equal(ran.thrown.details?.circuit, 'open');
  });

  /**
   * A resolver whose integration has `retry` and whose connection's receive does what `receive` does with the budget
   * it was bound with, as a connector's requests would through the transport.
   */
  const resolving = (
    retry: RetrySettings | undefined,
    receive: (budget: ExecuteBudget) => Promise<ConnectorResult>,
  ): Partial<IntegrationResolver> => ({
    resolve: () => ({ integration: { settings: { retry } } }) as unknown as Resolved,
    bind: (_resolved, budget) =>
      ({
        definition: {},
        connection: { prepare: async () => [], receive: () => receive(budget), test: () => receive(budget) },
        redaction: () => SecretMatcher.none,
      }) as unknown as BoundRun,
  });

  test("the budget's policy is the integration's: its retry settings, the breaker asked once before the first request", async () => {
    let asked = 0;
    const seen: Array<RetrySettings | undefined> = [];
    const open = {
      admit: async () => {
        asked += 1;
        return { ok: false, retryAfterSeconds: 7 };
      },
      state: async () => 'open',
      record: async () => false,
    } as unknown as CircuitBreakers;
    const r = new ExecutionRunner({
      executeMaxBytes: 1024,
      turns: new FairTurns(),
      breakers: open,
      resilience: fakeResilience(),
      resolver: resolving(defaultRetrySettings, async (budget) => {
        seen.push(budget.policy.retry);
        await budget.admit();
        assert.equal(budget.admit(), undefined, 'the breaker is asked once per execute');
        return { data: {}, messageCount: 0 };
      }) as IntegrationResolver,
    });
    const ran = await r.run(call(), stored(), 'exe_4', 5);
    assert.deepEqual(seen, [defaultRetrySettings]);
    assert.equal(asked, 1);
    assert.ok(ran.thrown instanceof ApiError);
    assert.equal(ran.thrown.code, 'upstream_circuit_open');
    assert.equal(ran.thrown.retryAfterSeconds, 7);
    assert.equal(ran.attempts, 0, 'a call the open breaker refused tried the upstream 0 times');
  });

  test('test: the breaker is never asked; the stats the requests added are the outcome’s', async () => {
    const ran = await runner(
      resolving(undefined, async (budget) => {
        assert.equal(budget.admit(), undefined);
        budget.stats.retries = 2;
        budget.stats.upstreamMs = 40;
        return { data: { details: {} }, messageCount: 0 };
      }),
    ).run(call('test'), stored(), 'exe_5', 5);
    assert.equal(ran.thrown, undefined);
    assert.deepEqual([ran.attempts, ran.upstreamMs, ran.reachedUpstream], [3, 40, false]);
  });

  test('its budget is IX_EXECUTE_MAX_BYTES and the deadline given', () => {
    const budget = runner({}).budget('acme', 2);
    assert.equal(budget.remainingBytes(), 1024);
    assert.ok(budget.remainingMs() <= 2000 && budget.remainingMs() > 0);
  });
});
