import { nowIso } from '../core/ids.ts';
import type { Db } from '../storage/database.ts';
import type { ExecutionLog } from '../storage/execution-log.ts';
import type { Execution } from '../storage/execution-rows.ts';
import { type ExecuteCall, endOf } from './call.ts';
import { type ExecutionEvents, eventTypeOf } from './events.ts';
import { operationNameOf } from './operation-name.ts';
import type { Outcome, Reply } from './reply.ts';

/**
 * Where an execution's end goes: a synchronous call's record to the executions log (written behind) and its event to
 * the webhooks; an async end's event within the transaction that stores that end.
 */
export class ExecutionRecorder {
  readonly #executions: ExecutionLog;
  readonly #events: ExecutionEvents;

  constructor(deps: { executions: ExecutionLog; events: ExecutionEvents }) {
    this.#executions = deps.executions;
    this.#events = deps.events;
  }

  /** The record of a call answered now (a synchronous call, or an async one refused when accepted), and its event. */
  record(call: ExecuteCall, outcome: Outcome, reply: Reply, startedAt: string, mode: 'sync' | 'async'): void {
    const execution: Execution = {
      id: outcome.executionId,
      integration_id: call.integrationId,
      connector: outcome.connector,
      operation: call.operation,
      operation_name: operationNameOf(call.fields),
      mode,
      via: call.via ?? 'api',
      ...endOf(outcome, reply),
      api_key_id: call.keyId,
      user_id: call.userId,
      request_id: call.requestId,
      started_at: startedAt,
      finished_at: nowIso(),
    };
    this.#executions.record(call.tenantId, execution);
    // Events only for a tenant with endpoints; a synchronous call's event carries its record, never its answer.
    if (this.#events.wanted(call.tenantId)) this.#events.finished(call.tenantId, execution);
  }

  /**
   * The event of an async end, within the transaction that stores that end (docs/async.md#webhooks). The answer is read
   * back into a value (`result()`) only for a tenant with endpoints. True when an event was stored (to be delivered).
   */
  storeEvent(trx: Db, tenantId: string, execution: Execution, result: () => unknown): Promise<boolean> {
    if (!eventTypeOf(execution) || !this.#events.wanted(tenantId)) return Promise.resolve(false);
    return this.#events.storeWithin(trx, tenantId, execution, result());
  }
}
