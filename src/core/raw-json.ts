import { randomBytes } from 'node:crypto';

/**
 * A JSON value held as its UTF-8 text, not as objects: what a large upstream answer becomes once a worker thread has
 * read it (answer-workers.ts). It sits in a reply's `data` like any value and is written out as it is, so the main
 * thread never parses, walks or serializes its megabytes, and its heap (and GC) never holds them. Its text is
 * already redacted: whoever made it applied the integration's secrets.
 */
export class RawJson {
  /** The value's text, in pieces that are written one after the other. */
  readonly chunks: readonly Buffer[];

  constructor(chunks: readonly Buffer[]) {
    this.chunks = chunks;
  }

  /** In JSON.stringify, a marker that `serializeReply` replaces with the text (alone, it says what it holds). */
  toJSON(): string {
    return marker;
  }
}

/** Unguessable per process, so that no upstream text can pose as a marker. */
const marker = `\u0000ix-raw-json-${randomBytes(16).toString('hex')}\u0000`;
const quotedMarker = JSON.stringify(marker);

const open = Buffer.from('[');
const close = Buffer.from(']');
const comma = Buffer.from(',');

/**
 * An array of members given as runs of JSON text (`{"a":1},{"a":2}`: members joined by commas, no brackets), one run
 * per page; empty runs are left out.
 */
export function rawJsonArray(runs: readonly Buffer[]): RawJson {
  const chunks: Buffer[] = [open];
  for (const run of runs) {
    if (run.length === 0) continue;
    if (chunks.length > 1) chunks.push(comma);
    chunks.push(run);
  }
  chunks.push(close);
  return new RawJson(chunks);
}

/** A reply written as chunks, one after the other: how a reply holding RawJson goes out without being copied whole. */
export interface ReplyChunks {
  chunks: Buffer[];
  byteLength: number;
}

/**
 * The reply as chunks when `text` (its JSON.stringify) holds RawJson markers, each replaced by its value's text in
 * order; undefined when it holds none (the common case: the text is the reply). `value` is serialized once more with
 * a replacer that collects the RawJson values in the order JSON.stringify meets them; the value around them is small.
 * The RawJson's megabytes are not copied: the chunks are their own memory.
 */
export function serializeReply(value: unknown, text: string): ReplyChunks | undefined {
  if (!text.includes(quotedMarker)) return undefined;
  const raws: RawJson[] = [];
  // A replacer sees what toJSON returned; the RawJson itself is still its holder's property.
  const withMarkers = JSON.stringify(value, function (this: Record<string, unknown>, key: string, item: unknown) {
    const original = this[key];
    if (original instanceof RawJson) raws.push(original);
    return item;
  });
  const chunks: Buffer[] = [];
  withMarkers.split(quotedMarker).forEach((piece, index) => {
    if (piece !== '') chunks.push(Buffer.from(piece));
    if (index < raws.length) chunks.push(...raws[index].chunks);
  });
  return { chunks, byteLength: chunks.reduce((sum, chunk) => sum + chunk.length, 0) };
}
