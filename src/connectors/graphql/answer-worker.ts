/**
 * What a worker thread does with a large GraphQL answer (src/transport/answer-workers.ts): the reading the main thread
 * would otherwise spend its event loop on — decode, bound, parse, normalise, extract the records, redact, serialize —
 * with the same functions the main thread uses for small answers. What comes back is the records' (or the data's)
 * JSON text as transferred memory, plus the few facts the caller needs (counts, pageInfo, errors), or the failure.
 * Nothing here holds state between tasks.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { ApiError } from '../../errors.ts';
import { SecretMatcherCache } from '../../secrets/matcher-cache.ts';
import { redactReply } from '../../secrets/redact.ts';
import { countNonNullRootFields, extractRecords, type PageInfo } from './records.ts';
import { readGraphqlResponse } from './response.ts';

export interface AnswerTask {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
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

export type RecordsMessage =
  | {
      ok: true;
      /** The records' JSON text: an array. */
      text: Uint8Array;
      count: number;
      totalSize: number;
      totalCount?: number;
      pageInfo?: PageInfo;
      errors?: unknown[];
    }
  | { ok: false; failure: FailureMessage };

export type DataMessage =
  | { ok: true /** `data`'s JSON text. */; text: Uint8Array; rootFields: number; errors?: unknown[] }
  | { ok: false; failure: FailureMessage };

function bodyOf(task: AnswerTask): Buffer {
  return Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
}

/** This worker's matchers, by secret set: a large answer's integration is likely to send the next one too. */
const matchers = new SecretMatcherCache(16);

/** `value` as redacted JSON text. */
function redactedText(value: unknown, secrets: readonly string[]): Buffer {
  const { text } = redactReply({ data: value }, matchers.get(secrets));
  // `{"data":…}`: the value's own text is between the wrapper's 8 characters and its closing brace.
  return Buffer.from(text.slice(8, -1));
}

/**
 * The message, with the memory of its text moved (not copied) to the main thread when the text has a memory of its own
 * (a small Buffer shares Node's pool, which must stay in this thread, and is copied instead).
 */
function moving<T extends { text: Uint8Array }>(message: T): T {
  const { buffer, byteOffset, byteLength } = message.text;
  if (byteOffset !== 0 || byteLength !== buffer.byteLength) return message;
  return move({ [transferableSymbol]: [buffer], [valueSymbol]: message }) as unknown as T;
}

function failed(error: unknown): { ok: false; failure: FailureMessage } {
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

/** A page of a receive: its records as text (see extractRecords for which records). */
export function readRecordsAnswer(task: AnswerTask & { recordsPath?: string }): RecordsMessage {
  try {
    const answer = readGraphqlResponse(task.status, task.headers, bodyOf(task));
    const extracted = extractRecords(answer.data, task.recordsPath);
    return moving({
      ok: true as const,
      text: redactedText(extracted.records, task.secrets),
      count: extracted.records.length,
      totalSize: extracted.totalSize,
      ...(extracted.totalCount !== undefined && { totalCount: extracted.totalCount }),
      ...(extracted.pageInfo && { pageInfo: extracted.pageInfo }),
      ...(answer.errors && { errors: answer.errors }),
    });
  } catch (error) {
    return failed(error);
  }
}

/** The answer to a mutation: its `data` as text, and how many root fields it answered. */
export function readDataAnswer(task: AnswerTask): DataMessage {
  try {
    const answer = readGraphqlResponse(task.status, task.headers, bodyOf(task));
    return moving({
      ok: true as const,
      text: redactedText(answer.data, task.secrets),
      rootFields: countNonNullRootFields(answer.data),
      ...(answer.errors && { errors: answer.errors }),
    });
  } catch (error) {
    return failed(error);
  }
}
