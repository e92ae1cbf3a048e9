import { ApiError } from '../../core/errors.ts';

/**
 * SOAP answers in MIME packages (`multipart/related`, RFC 2387): MTOM/XOP (the W3C's SOAP Message Transmission
 * Optimization Mechanism, as JAX-WS and Spring-WS send binary content) and SOAP with Attachments (SwA, W3C Note 2000).
 * The root part is the envelope; an `xop:Include href="cid:…"` in it stands for the content of the part with that
 * Content-ID, which `unpackMultipart` puts back as the base64 text the element would carry inline. The parts nothing
 * includes are the answer's attachments.
 */

/** One attachment of an answer: a MIME part no `xop:Include` took. */
export interface Attachment {
  content_id: string | null;
  content_type: string | null;
  size: number;
  /** Its bytes, base64-encoded. */
  base64: string;
}

/** The most parts one answer may have. */
export const maxMimeParts = 1000;

const xopNamespace = 'http://www.w3.org/2004/08/xop/include';

interface Part {
  headers: Map<string, string>;
  body: Buffer;
}

/**
 * Whether an answer's Content-Type is a MIME package (`multipart/related`).
 *
 * @example isMultipartRelated('multipart/related; type="application/xop+xml"; boundary=b') // true
 */
export function isMultipartRelated(contentType: string | undefined): boolean {
  return contentType !== undefined && /^\s*multipart\/related\s*(;|$)/i.test(contentType);
}

/**
 * The envelope of a `multipart/related` answer, its `xop:Include` elements replaced by the base64 text of the parts
 * they name, and the parts nothing included (attachments, in order). A package without a boundary or without its root
 * part, a part without its header end, a Content-Transfer-Encoding other than binary, 8bit, 7bit or base64, or more
 * than `maxMimeParts` parts is `upstream_invalid_response`; so is an `xop:Include` naming a part the package lacks.
 *
 * @example unpackMultipart('multipart/related; boundary=b; start="<r>"', body) // { envelope: '<S:Envelope…', attachments: [] }
 */
export function unpackMultipart(contentType: string, body: Buffer): { envelope: Buffer; attachments: Attachment[] } {
  const boundary = parameter(contentType, 'boundary');
  if (!boundary) throw invalid('its multipart/related Content-Type has no boundary');
  const parts = splitParts(body, boundary);
  const start = parameter(contentType, 'start');
  const root = start === undefined ? parts[0] : parts.find((part) => contentId(part) === bare(start));
  if (root === undefined) throw invalid(`it has no root part${start === undefined ? '' : ` ${start}`}`);
  const byId = new Map<string, Part>();
  for (const part of parts) {
    const id = contentId(part);
    if (id !== null && part !== root && !byId.has(id)) byId.set(id, part);
  }
  const included = new Set<Part>();
  let envelope = root.body;
  const text = envelope.toString('utf8');
  if (text.includes(xopNamespace)) {
    const replaced = text.replace(xopInclude, (_whole, _prefix: string, attributes: string) => {
      const href = /\bhref\s*=\s*(["'])cid:([^"']*)\1/.exec(attributes)?.[2];
      if (href === undefined) throw invalid('an xop:Include has no cid: href');
      const part = byId.get(safeDecode(href));
      if (part === undefined) throw invalid(`an xop:Include names cid:${href}, which the package lacks`);
      included.add(part);
      return part.body.toString('base64');
    });
    envelope = Buffer.from(replaced, 'utf8');
  }
  const attachments = parts
    .filter((part) => part !== root && !included.has(part))
    .map((part) => ({
      content_id: contentId(part),
      content_type: part.headers.get('content-type') ?? null,
      size: part.body.length,
      base64: part.body.toString('base64'),
    }));
  return { envelope, attachments };
}

/** `<xop:Include href="cid:…"/>` (or with an end tag), in any prefix. */
const xopInclude = /<((?:[A-Za-z_][\w.-]*:)?)Include\b([^>]*?)(?:\/>|>\s*<\/\1Include\s*>)/g;

/** The parts between the boundary delimiters (RFC 2046 §5.1.1), preamble and epilogue dropped, bodies decoded. */
function splitParts(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const crlfDelimiter = Buffer.concat([Buffer.from('\r\n'), delimiter]);
  const lfDelimiter = Buffer.concat([Buffer.from('\n'), delimiter]);
  let at = body.indexOf(delimiter);
  if (at === -1) throw invalid('its boundary never occurs');
  const parts: Part[] = [];
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) break; // `--boundary--`: the end
    const lineEnd = body.indexOf('\n', afterDelimiter);
    if (lineEnd === -1) throw invalid('a part is cut off');
    const next = body.indexOf(crlfDelimiter, lineEnd);
    const nextBare = next === -1 ? body.indexOf(lfDelimiter, lineEnd) : -1;
    if (next === -1 && nextBare === -1) throw invalid('its closing boundary is missing');
    const end = next !== -1 ? next : nextBare;
    parts.push(part(body.subarray(lineEnd + 1, end)));
    if (parts.length > maxMimeParts) throw invalid(`it has more than ${maxMimeParts} parts`);
    at = end + (next !== -1 ? 2 : 1);
  }
  if (parts.length === 0) throw invalid('it has no parts');
  return parts;
}

function part(raw: Buffer): Part {
  let split = raw.indexOf('\r\n\r\n');
  let gap = 4;
  if (split === -1) {
    split = raw.indexOf('\n\n');
    gap = 2;
  }
  if (split === -1) throw invalid("a part's headers do not end");
  const headers = new Map<string, string>();
  for (const line of raw
    .subarray(0, split)
    .toString('latin1')
    .split(/\r?\n(?![ \t])/)) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers.set(
        line.slice(0, colon).trim().toLowerCase(),
        line
          .slice(colon + 1)
          .replace(/\r?\n[ \t]+/g, ' ')
          .trim(),
      );
  }
  const content = raw.subarray(split + gap);
  const encoding = (headers.get('content-transfer-encoding') ?? 'binary').toLowerCase();
  if (encoding === 'base64') return { headers, body: Buffer.from(content.toString('latin1'), 'base64') };
  if (encoding !== 'binary' && encoding !== '8bit' && encoding !== '7bit') {
    throw invalid(`a part's Content-Transfer-Encoding is ${encoding}`);
  }
  return { headers, body: content };
}

/** A part's Content-ID without its angle brackets, or null. */
function contentId(part: Part): string | null {
  const id = part.headers.get('content-id');
  return id === undefined ? null : bare(id);
}

function bare(id: string): string {
  return id.trim().replace(/^<(.*)>$/, '$1');
}

/** A `cid:` URL's Content-ID (RFC 2392: URL-encoded); as written when it is no valid encoding. */
function safeDecode(href: string): string {
  try {
    return decodeURIComponent(href);
  } catch {
    return href;
  }
}

/** A Content-Type parameter's value, unquoted. */
function parameter(contentType: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]*))`, 'i').exec(contentType);
  return match === null ? undefined : (match[1] ?? match[2]);
}

function invalid(why: string): ApiError {
  return new ApiError('upstream_invalid_response', `The upstream answer is a MIME package that cannot be read: ${why}.`);
}
