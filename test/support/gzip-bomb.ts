import { createGzip } from 'node:zlib';

const MiB = 1024 * 1024;

/** `mebibytes` MiB of zeros gzipped as a stream (about 1 KiB per MiB): the inflated size is never in memory here. */
export async function gzipBomb(mebibytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < mebibytes; i++) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await ended;
  return Buffer.concat(chunks);
}
