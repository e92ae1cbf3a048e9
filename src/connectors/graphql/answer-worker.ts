/**
 * What a worker thread does with a large GraphQL answer (src/transport/answer-workers.ts): the reading the main thread
 * would otherwise spend its event loop on — decode, bound, parse, normalise, extract the records, redact, serialize —
 * with the same functions the main thread uses for small answers. What comes back is the records' (or the data's)
 * JSON text as transferred memory, plus the few facts the caller needs (counts, pageInfo, errors), or the failure.
 * Nothing here holds state between tasks.
 */
import { type AnswerTask, bodyOf, type Failed, failed, moving, redactedText } from '../../transport/answer-worker-kit.ts';
import { countNonNullRootFields, extractRecords, type PageInfo } from './records.ts';
import { readGraphqlResponse } from './response.ts';

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
  | Failed;

export type DataMessage =
  | { ok: true /** `data`'s JSON text. */; text: Uint8Array; rootFields: number; errors?: unknown[] }
  | Failed;

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
