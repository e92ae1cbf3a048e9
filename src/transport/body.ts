import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ApiError } from '../core/errors.ts';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('upstream_response_too_large', `The upstream response is larger than the limit of ${maxBytes} bytes.`, {
    limit_bytes: maxBytes,
  });
}

/** zlib's own failures (`Z_DATA_ERROR`, `Z_BUF_ERROR` for a truncated stream, …) as opposed to the source's. */
function isZlibError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

/**
 * A body of this many bytes or more is kept in segments this process owns, copied in chunk by chunk as it arrives: a
 * large body is never joined into one buffer on the main thread (the first touch of a fresh 10 MB buffer alone holds
 * the loop for about 30 ms, the copy beside it), and its segments move to a worker thread as they are.
 */
export const segmentedMinBytes = 1024 * 1024;
const segmentBytes = 1024 * 1024;

/** A body as read: its size, whole when asked (joined once), or in the pieces it was kept in. */
export class ReadBody {
  readonly size: number;
  readonly #parts: readonly Buffer[];
  /** Whether every part has a memory of its own (the segments of a large body), which can move to another thread. */
  readonly owned: boolean;
  #whole: Buffer | undefined;

  constructor(parts: readonly Buffer[], size: number, owned: boolean) {
    this.#parts = parts;
    this.size = size;
    this.owned = owned;
  }

  /** The bytes in one buffer: a large body's segments are joined on the first call (on the thread that asks). */
  get whole(): Buffer {
    this.#whole ??= this.#parts.length === 1 ? this.#parts[0] : Buffer.concat(this.#parts as Buffer[], this.size);
    return this.#whole;
  }

  /**
   * The pieces, in order, not joined; the same ones whether or not `whole` was asked for, so that moving them to a
   * worker (`owned`) never detaches the buffer `whole` gave out.
   */
  get parts(): readonly Buffer[] {
    return this.#parts;
  }
}

/** Chunks kept up to a size: `add` answers false once more than `maxBytes` have come. */
class Capped {
  #chunks: Buffer[] = [];
  #size = 0;
  readonly #maxBytes: number;
  /** Past segmentedMinBytes: the segments, the last one being filled up to `#filled`. */
  #segments: Buffer[] | undefined;
  #filled = 0;
  #keep = true;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** From now on only counted, not kept (a gzipped body's compressed bytes, once an inflater reads them). */
  countOnly(): void {
    this.#keep = false;
    this.#chunks = [];
    this.#segments = undefined;
  }

  add(chunk: Buffer): boolean {
    this.#size += chunk.length;
    if (this.#size > this.#maxBytes) return false;
    if (!this.#keep) return true;
    if (this.#segments) this.#copy(chunk);
    else {
      this.#chunks.push(chunk);
      if (this.#size >= segmentedMinBytes) {
        // From here on, each chunk is copied in when it comes: at most a segment's first touch per chunk.
        this.#segments = [];
        for (const kept of this.#chunks) this.#copy(kept);
        this.#chunks = [];
      }
    }
    return true;
  }

  #copy(chunk: Buffer): void {
    let from = 0;
    while (from < chunk.length) {
      let segment = this.#segments?.at(-1);
      if (!segment || this.#filled === segment.length) {
        segment = Buffer.allocUnsafeSlow(Math.min(segmentBytes, this.#maxBytes));
        this.#segments?.push(segment);
        this.#filled = 0;
      }
      const copied = chunk.copy(segment, this.#filled, from);
      this.#filled += copied;
      from += copied;
    }
  }

  done(): ReadBody {
    const segments = this.#segments;
    if (!segments) return new ReadBody(this.#chunks, this.#size, false);
    const last = segments.length - 1;
    segments[last] = segments[last].subarray(0, this.#filled);
    return new ReadBody(segments, this.#size, true);
  }
}

/**
 * Reads a response body, gunzipping it when it says `Content-Encoding: gzip` or starts with the
 * gzip magic bytes `1f 8b` whatever the headers say (docs/execute.md#what-is-sent). The raw body and the
 * decompressed body each count against `maxBytes`: `upstream_response_too_large`, as soon as the
 * limit is passed. Gunzipping is a stream: memory stays around `maxBytes` whatever the compression
 * ratio (a gzip bomb stops at the cap instead of being inflated first). On any failure the body is
 * destroyed, which releases its socket.
 *
 * Events, not async iteration: this runs on every upstream answer, and an iterator costs a promise per chunk.
 */
export function readUpstreamBody(body: Readable, declaredGzip: boolean, maxBytes: number): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const raw = new Capped(maxBytes);
    /** The first bytes, until there are two of them to tell gzip by. */
    let head: Buffer | undefined = Buffer.alloc(0);
    let inflater: ReturnType<typeof createGunzip> | undefined;
    let settled = false;

    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      body.destroy();
      inflater?.destroy();
      reject(error);
    };
    const succeed = (read: ReadBody) => {
      if (settled) return;
      settled = true;
      resolve(read);
    };
    /** Called once the first two bytes (or the whole of a shorter body) are known. */
    const start = (first: Buffer) => {
      head = undefined;
      if (!declaredGzip && !(first[0] === 0x1f && first[1] === 0x8b)) return;
      raw.countOnly();
      const inflated = new Capped(maxBytes);
      inflater = createGunzip();
      inflater.on('data', (chunk: Buffer) => {
        if (!inflated.add(chunk)) fail(tooLarge(maxBytes));
      });
      inflater.on('error', (error) => {
        fail(isZlibError(error) ? new ApiError('upstream_invalid_response', 'The upstream response is not valid gzip.') : error);
      });
      inflater.on('end', () => succeed(inflated.done()));
      inflater.write(first);
    };

    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (!raw.add(chunk)) return fail(tooLarge(maxBytes));
      if (head !== undefined) {
        head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
        if (head.length >= 2) start(head);
      } else if (inflater) {
        inflater.write(chunk);
      }
    });
    body.on('error', fail);
    body.on('end', () => {
      if (head !== undefined) {
        // An empty body is no body, whatever its headers say; a one-byte body is decided on that byte.
        if (head.length === 0) return succeed(new ReadBody([], 0, false));
        start(head);
      }
      if (inflater) inflater.end();
      else succeed(raw.done());
    });
  });
}
