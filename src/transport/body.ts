import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ApiError } from '../errors.ts';

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

/** Chunks kept up to a size: `add` answers false once more than `maxBytes` have come. */
class Capped {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  add(chunk: Buffer): boolean {
    this.#size += chunk.length;
    if (this.#size > this.#maxBytes) return false;
    this.#chunks.push(chunk);
    return true;
  }

  whole(): Buffer {
    return this.#chunks.length === 1 ? this.#chunks[0] : Buffer.concat(this.#chunks, this.#size);
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
export function readUpstreamBody(body: Readable, declaredGzip: boolean, maxBytes: number): Promise<Buffer> {
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
    const succeed = (whole: Buffer) => {
      if (settled) return;
      settled = true;
      resolve(whole);
    };
    /** Called once the first two bytes (or the whole of a shorter body) are known. */
    const start = (first: Buffer) => {
      head = undefined;
      if (!declaredGzip && !(first[0] === 0x1f && first[1] === 0x8b)) return;
      const inflated = new Capped(maxBytes);
      inflater = createGunzip();
      inflater.on('data', (chunk: Buffer) => {
        if (!inflated.add(chunk)) fail(tooLarge(maxBytes));
      });
      inflater.on('error', (error) => {
        fail(isZlibError(error) ? new ApiError('upstream_invalid_response', 'The upstream response is not valid gzip.') : error);
      });
      inflater.on('end', () => succeed(inflated.whole()));
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
        if (head.length === 0) return succeed(head);
        start(head);
      }
      if (inflater) inflater.end();
      else succeed(raw.whole());
    });
  });
}
