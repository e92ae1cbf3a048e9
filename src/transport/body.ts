import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { ApiError } from '../errors.ts';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError('upstream_response_too_large', `The upstream response is larger than the limit of ${maxBytes} bytes.`, {
    limit_bytes: maxBytes,
  });
}

/** Passes chunks through, failing as soon as more than `maxBytes` have gone by. */
async function* capped(source: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Buffer> {
  let size = 0;
  for await (const chunk of source) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    yield chunk;
  }
}

async function collect(source: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** zlib's own failures (`Z_DATA_ERROR`, `Z_BUF_ERROR` for a truncated stream, …) as opposed to the source's. */
function isZlibError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('Z_');
}

/**
 * Gunzips as a stream: memory stays around `maxBytes` whatever the compression ratio (a gzip
 * bomb stops at the cap instead of being inflated first).
 */
async function gunzip(source: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    await pipeline(Readable.from(source, { objectMode: false }), createGunzip(), async (inflated: AsyncIterable<Buffer>) => {
      for await (const chunk of capped(inflated, maxBytes)) chunks.push(chunk);
    });
  } catch (err) {
    if (isZlibError(err)) throw new ApiError('upstream_invalid_response', 'The upstream response is not valid gzip.');
    throw err;
  }
  return Buffer.concat(chunks);
}

/**
 * Reads a response body, gunzipping it when it says `Content-Encoding: gzip` or starts with the
 * gzip magic bytes `1f 8b` whatever the headers say (API.md section 5). The raw body and the
 * decompressed body each count against `maxBytes`: `upstream_response_too_large`.
 */
export async function readUpstreamBody(body: Readable, declaredGzip: boolean, maxBytes: number): Promise<Buffer> {
  const raw = capped(body, maxBytes);
  try {
    // The first two bytes decide; a chunk may in theory hold only one.
    const head: Buffer[] = [];
    let headSize = 0;
    while (headSize < 2) {
      const next = await raw.next();
      if (next.done) break;
      head.push(next.value);
      headSize += next.value.length;
    }
    const start = Buffer.concat(head);
    if (start.length === 0) return start;
    async function* whole(): AsyncGenerator<Buffer> {
      yield start;
      yield* raw;
    }
    const gzipped = declaredGzip || (start[0] === 0x1f && start[1] === 0x8b);
    return gzipped ? await gunzip(whole(), maxBytes) : await collect(whole());
  } finally {
    // Stop reading (and release the socket) on any early exit.
    if (!body.readableEnded) body.destroy();
  }
}
