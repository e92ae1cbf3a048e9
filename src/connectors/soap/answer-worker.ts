/**
 * What a worker thread does with a large SOAP answer (src/transport/answer-workers.ts): decode, bound and read the XML,
 * normalise a fault, shape the result by the operation's output model in WSDL mode, redact and serialize it — the
 * same functions the main thread uses for small answers. What comes back is the result's JSON text, or the failure.
 */
import { type AnswerTask, bodyOf, type Failed, failed, moving, redactedText } from '../../transport/answer-worker-kit.ts';
import { readSoapResponse } from './response.ts';
import { shapeResult } from './result-shape.ts';
import type { ComplexModel } from './type-model.ts';

export type ResultMessage = { ok: true /** The result's JSON text. */; text: Uint8Array } | Failed;

/**
 * The answer's result, shaped by `model` (WSDL mode's output, copied here with the task) when there is one; with
 * `bodyParts`, of every element of the Body (see readSoapResponse).
 */
export function readSoapAnswer(
  task: AnswerTask & { model?: ComplexModel; bodyParts?: boolean; maxResolvedBytes?: number },
): ResultMessage {
  try {
    const { bodyParts, maxResolvedBytes } = task;
    const result = readSoapResponse(task.status, task.headers, bodyOf(task), { bodyParts, maxResolvedBytes });
    const data = task.model ? shapeResult(task.model, result) : result;
    return moving({ ok: true as const, text: redactedText(data, task.secrets) });
  } catch (error) {
    return failed(error);
  }
}
