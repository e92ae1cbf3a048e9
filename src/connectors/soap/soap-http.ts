import { ApiError } from '../../core/errors.ts';
import type { ExecuteBudget } from '../../transport/budget.ts';
import { bodyExcerpt } from '../../transport/excerpt.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../transport/upstream.ts';

export interface SoapHttpOptions {
  /**
   * Sends a request with the integration's credentials where they may go (none to an origin its owner did not name,
   * such as a WSDL's import from another host: credentials/upstream-credentials.ts).
   */
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  timeoutMs: number;
  maxBodyBytes: number;
  /** The execute's budget, spent by every request (WSDL documents included). */
  budget: ExecuteBudget;
}

/** What loading one WSDL may cost, all its imports and includes together. */
export interface WsdlLoadLimits {
  maxDocuments: number;
  maxBytes: number;
  /** For all the documents together, from the first fetch (the integration's timeout_seconds). */
  timeoutMs: number;
}

/** docs/limits.md#upstreams: one WSDL is at most 100 documents and 16 MiB, read within the integration's timeout_seconds. */
export const wsdlLoadDefaults = { maxDocuments: 100, maxBytes: 16 * 1024 * 1024 } as const;

/**
 * Fetches the documents of one WSDL (the WSDL, its imports and includes) for wsdl-loader.ts: each a GET through the
 * egress-checked transport, with the auth header where it may go, the timeout and the size cap, and all of them
 * together within `limits`. Redirects are not followed, and any answer but 2xx fails the load. Documents declaring
 * a DTD are refused before they are parsed (readXmlTree holds them to the bounds of answers as it reads them). WSDL mode's calls
 * do not come here: the connector posts its own envelopes.
 */
export class SoapHttp {
  readonly #options: SoapHttpOptions;
  readonly #limits: WsdlLoadLimits;
  /** URLs fetched (the WSDL and its imports): tests read this to see the cache work. */
  readonly fetched: string[] = [];
  #fetchedBytes = 0;
  /** `performance.now()` by which every document of the WSDL must have arrived. */
  #loadEndsAt: number | undefined;

  constructor(options: SoapHttpOptions, limits: WsdlLoadLimits) {
    this.#options = options;
    this.#limits = limits;
  }

  /** The text of one document of the WSDL; throws an ApiError when it cannot be had or may not be read. */
  async get(url: string): Promise<string> {
    const bounds = this.loadBounds();
    this.fetched.push(url);
    let response: UpstreamResponse;
    try {
      response = await this.#options.send({
        url,
        method: 'GET',
        headers: {},
        timeoutMs: bounds.timeoutMs,
        maxBodyBytes: bounds.maxBodyBytes,
        budget: this.#options.budget,
        // A retried document gets no more time than the whole load has left.
        endsAt: this.#loadEndsAt,
      });
    } catch (error) {
      throw this.loadFailure(error, bounds);
    }
    if (response.status < 200 || response.status >= 300) {
      throw new ApiError('upstream_http_error', `Fetching the WSDL answered HTTP ${response.status}.`, {
        upstream_status: response.status,
        body_excerpt: bodyExcerpt(response.body),
      });
    }
    const text = response.body.toString('utf8');
    if (declaresDtd(text))
      throw new ApiError('upstream_invalid_response', 'The upstream answer declares a DTD, which is refused.');
    // The bounds raw mode reads answers within (docs/limits.md#upstreams) are counted as the document is read.
    this.#fetchedBytes += response.size;
    return text;
  }

  /** The time and bytes the next WSDL document may take; throws once the WSDL has used up its documents or time. */
  private loadBounds(): { timeoutMs: number; maxBodyBytes: number; boundByLoad: { time: boolean; bytes: boolean } } {
    const limits = this.#limits;
    this.#loadEndsAt ??= performance.now() + limits.timeoutMs;
    if (this.fetched.length >= limits.maxDocuments) {
      throw new ApiError(
        'upstream_invalid_response',
        `The WSDL needs more than ${limits.maxDocuments} documents (imports and includes); at most ${limits.maxDocuments} are read.`,
        { limit_documents: limits.maxDocuments },
      );
    }
    const timeLeft = this.#loadEndsAt - performance.now();
    if (timeLeft <= 0) throw wsdlTimeout(limits);
    const bytesLeft = limits.maxBytes - this.#fetchedBytes;
    return {
      timeoutMs: Math.min(this.#options.timeoutMs, timeLeft),
      maxBodyBytes: Math.min(this.#options.maxBodyBytes, bytesLeft),
      boundByLoad: { time: timeLeft < this.#options.timeoutMs, bytes: bytesLeft < this.#options.maxBodyBytes },
    };
  }

  /** A document's failure in the WSDL's terms when the WSDL's own limits, not one request's, were what ran out. */
  private loadFailure(error: unknown, bounds: ReturnType<SoapHttp['loadBounds']>): unknown {
    const limits = this.#limits;
    if (!(error instanceof ApiError) || error.details?.scope === 'execute') return error;
    if (error.code === 'upstream_timeout' && bounds.boundByLoad.time) return wsdlTimeout(limits);
    if (error.code === 'upstream_response_too_large' && bounds.boundByLoad.bytes) {
      return new ApiError(
        'upstream_invalid_response',
        `The WSDL's documents together are larger than the limit of ${limits.maxBytes} bytes.`,
        { limit_bytes: limits.maxBytes },
      );
    }
    return error;
  }
}

function wsdlTimeout(limits: WsdlLoadLimits): ApiError {
  const seconds = limits.timeoutMs / 1000;
  return new ApiError('upstream_timeout', `Loading the WSDL and all its documents took longer than ${seconds} s.`, {
    timeout_seconds: seconds,
    scope: 'wsdl',
  });
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
