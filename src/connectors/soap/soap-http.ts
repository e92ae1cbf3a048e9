import type { Dispatcher } from 'undici';
import { ApiError } from '../../errors.ts';
import { sendUpstream, type UpstreamResponse } from '../../transport/upstream.ts';

export interface SoapHttpOptions {
  dispatcher: Dispatcher;
  /** Sent on every request, WSDL fetches included (the integration's auth header). */
  headers: Record<string, string>;
  timeoutMs: number;
  maxBodyBytes: number;
}

type Callback = (
  error: unknown,
  response?: { status: number; headers: Record<string, string>; data: string },
  body?: string,
) => void;

// Set by undici from the request itself; node-soap's values (e.g. `Accept-Encoding: none`) must not override ours.
const droppedHeaders = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'user-agent']);

/**
 * node-soap's HttpClient contract (`request(url, data, callback, headers)`), served by the
 * egress-checked transport: WSDL fetches, imports and calls all go through the one dispatcher,
 * with the auth header, the timeout and the size cap. Answers declaring a DTD are refused before
 * node-soap's parser sees them. The last answer is kept so faults can be read from the raw XML.
 */
export class SoapHttp {
  readonly #options: SoapHttpOptions;
  last: UpstreamResponse | undefined;
  /** URLs fetched with GET (the WSDL and its imports): tests read this to see the cache work. */
  readonly fetched: string[] = [];
  /** The documents those fetches returned (the SOAP version of a binding is read from them). */
  readonly fetchedXml: string[] = [];

  constructor(options: SoapHttpOptions) {
    this.#options = options;
  }

  request(url: string, data: string | null, callback: Callback, extraHeaders?: Record<string, unknown>): void {
    // The auth header first: node-soap's Content-Type and SOAPAction must win over a clash.
    const headers: Record<string, string> = { ...this.#options.headers };
    for (const [name, value] of Object.entries(extraHeaders ?? {})) {
      if (!droppedHeaders.has(name.toLowerCase()) && value !== undefined) headers[name.toLowerCase()] = String(value);
    }
    const isFetch = data === null || data === undefined;
    if (isFetch) this.fetched.push(url);
    sendUpstream(this.#options.dispatcher, {
      url,
      method: isFetch ? 'GET' : 'POST',
      headers,
      body: data ?? undefined,
      timeoutMs: this.#options.timeoutMs,
      maxBodyBytes: this.#options.maxBodyBytes,
    }).then(
      (response) => {
        this.last = response;
        const text = response.body.toString('utf8');
        if (declaresDtd(text)) {
          callback(new ApiError('upstream_invalid_response', 'The upstream answer declares a DTD, which is refused.'));
          return;
        }
        if (isFetch) this.fetchedXml.push(text);
        callback(null, { status: response.status, headers: response.headers, data: text }, text);
      },
      (error) => callback(error),
    );
  }
}

/**
 * Whether the document has a `<!` that opens neither a comment nor a CDATA section (`<!DOCTYPE`, `<!ENTITY`, in any
 * case): the same rule as the raw-mode parser's, so a CDATA section or a comment that merely mentions `<!DOCTYPE`
 * (an HTML report carried in a string) is not refused. An unclosed comment or CDATA section counts as a declaration.
 */
function declaresDtd(text: string): boolean {
  let at = text.indexOf('<!');
  while (at !== -1) {
    const close = text.startsWith('<!--', at) ? '-->' : text.startsWith('<![CDATA[', at) ? ']]>' : undefined;
    if (close === undefined) return true;
    const end = text.indexOf(close, at + 4);
    if (end === -1) return true;
    at = text.indexOf('<!', end + close.length);
  }
  return false;
}
