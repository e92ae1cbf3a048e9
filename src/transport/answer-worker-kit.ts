/**
 * What every worker-thread reader of large answers shares (src/connectors/*\/answer-worker.ts): the task it gets, the
 * failure it sends back, and the redacted JSON text it moves to the main thread. Loaded only in worker threads (it
 * imports piscina); the main thread imports its types only.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { ApiError } from '../core/errors.ts';
import { SecretMatcherCache } from '../secrets/matcher-cache.ts';
import { redactReply } from '../secrets/redact.ts';

/** An upstream's answer, as a worker reads it. */
export interface AnswerTask {
  status: number;
  headers: Record<string, string>;
  /** The body in the pieces it was read in (answer-workers.ts readOffThread): joined here, off the main thread. */
  parts: Uint8Array[];
  /** The integration's secret values: the text that comes back is redacted with them. */
  secrets: string[];
}

/** A failure as it crosses threads: an ApiError's parts. */
export interface FailureMessage {
  code: ApiError['code'];
  message: string;
  details?: Record<string, unknown>;
  upstreamErrors?: unknown[];
}

export type Failed = { ok: false; failure: FailureMessage };

/** The task's body in one Buffer (over the same memory when it came in one piece). */
export function bodyOf(task: AnswerTask): Buffer {
  const parts = task.parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength));
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

/** This worker's matchers, by secret set: a large answer's integration is likely to send the next one too. */
const matchers = new SecretMatcherCache(16);

/** `value` as redacted JSON text. */
export function redactedText(value: unknown, secrets: readonly string[]): Buffer {
  const { text } = redactReply({ data: value }, matchers.get(secrets));
  // `{"data":…}`: the value's own text is between the wrapper's 8 characters and its closing brace.
  return Buffer.from(text.slice(8, -1));
}

/**
 * The message, with the memory of its text moved (not copied) to the main thread when the text has a memory of its own
 * (a small Buffer shares Node's pool, which must stay in this thread, and is copied instead).
 */
export function moving<T extends { text: Uint8Array }>(message: T): T {
  const { buffer, byteOffset, byteLength } = message.text;
  if (byteOffset !== 0 || byteLength !== buffer.byteLength) return message;
  return move({ [transferableSymbol]: [buffer], [valueSymbol]: message }) as unknown as T;
}

/** An expected failure (an ApiError) as a message; anything else is a bug, thrown for the main thread to log. */
export function failed(error: unknown): Failed {
  if (!(error instanceof ApiError)) throw error;
  return {
    ok: false,
    failure: {
      code: error.code,
      message: error.message,
      ...(error.details && { details: error.details }),
      ...(error.upstreamErrors && { upstreamErrors: error.upstreamErrors }),
    },
  };
}
