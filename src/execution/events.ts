import type { Db } from '../storage/database.ts';
import type { Execution } from '../storage/execution-rows.ts';

export const executionEventTypes = ['execution.succeeded', 'execution.failed', 'execution.canceled'] as const;
export type ExecutionEventType = (typeof executionEventTypes)[number];

/** The event an execution's end is: `execution.succeeded`, `execution.failed` or `execution.canceled`. */
export function eventTypeOf(execution: Execution): ExecutionEventType | undefined {
  if (execution.status === 'succeeded') return 'execution.succeeded';
  if (execution.status === 'failed') return 'execution.failed';
  if (execution.status === 'canceled') return 'execution.canceled';
  return undefined;
}

/**
 * Where the execution service tells that an execution ended (docs/async.md#webhooks): the webhooks, which deliver an
 * event to each endpoint of the tenant that asked for its type. Synchronous calls ask `wanted` first, which is an
 * in-memory look-up, so a tenant without endpoints pays nothing for events.
 */
export interface ExecutionEvents {
  /** Whether the tenant has an endpoint that may want events (cached; a new endpoint is seen within seconds). */
  wanted(tenantId: string): boolean;
  /**
   * A synchronous execution ended (its record is written behind, so is its event, which carries no answer: a
   * synchronous call's answer is never stored). Never throws; logs.
   */
  finished(tenantId: string, execution: Execution): void;
  /**
   * An async execution ended, or a queued one was canceled: its event is stored within `trx`, the transaction that
   * stores that end, so both are kept or neither. True when delivery jobs were added: the caller tells the queue
   * (`committed('webhook-deliveries')`) once the transaction has committed.
   */
  storeWithin(trx: Db, tenantId: string, execution: Execution, result: unknown): Promise<boolean>;
}
