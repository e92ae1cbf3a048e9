/**
 * Whether a request surely never reached its upstream, as the transport saw it, not guessed from an error code.
 *
 * Promise: `surelyNotSent` stays true only while undici has not begun to write the request to a socket. Once it may
 * have (a byte may sit in the kernel's send buffer, whatever happened next) it is false for good. It errs one way
 * only: a request that never left may read false (undici was told to write on a socket the peer had already reset),
 * a request that may have left never reads true.
 *
 * What undici 7 (7.30) does, and why its `onRequestStart` is the line:
 * - A request is written only by `writeH1` (dispatcher/client-h1.js:1144) or `writeH2` (client-h2.js), and only on a
 *   socket whose connection is established (and, for https, whose TLS handshake is done): client.js `connect()`
 *   (client.js:431–522) hands the socket over only from the connector's success callback.
 * - `writeH1` calls `request.onConnect(abort)` (client-h1.js:1242) before its first `socket.write` (writeBuffer,
 *   client-h1.js:1484–1506; writeStream/writeIterable/writeBlob likewise), and returns without writing when the
 *   request was aborted by then (client-h1.js:1247–1249). `writeH2` does the same (client-h2.js:538–545).
 * - `Request.onConnect` (core/request.js:259) calls the handler's `onConnect` unless the request already failed;
 *   `UnwrapHandler.onConnect` (handler/unwrap-handler.js:68) turns it into the new API's
 *   `onRequestStart(controller, context)`, whose `controller.abort` is that same `abort`.
 * - A connection that fails (DNS, refused, the egress policy's refusal in the connector's lookup, a TLS handshake, a
 *   proxy tunnel) errors the queued requests through their `onError` (client.js:531 `handleConnectError` →
 *   client.js:404 `onError`): their `onRequestStart` is never called. So is a request aborted while it waited for a connection: undici's
 *   `request()` handler aborts it from inside `onConnect` (api/api-request.js:76–80), and nothing is written.
 * - The older `onRequestSent`/`onBodySent` (core/request.js:232–257) say when the whole request was handed over; the
 *   new handler API does not forward them (unwrap-handler.js has neither), and "was all of it written" is not the
 *   question: one byte may be enough for an upstream to act.
 *
 * So the watch marks "may have been sent" when `onRequestStart` returns without the request having been aborted in
 * it. It is an interceptor (`dispatcher.compose`) over whatever dispatcher the caller has, the egress dispatcher
 * included: the egress policy refuses in the connector, before any socket exists, so a refused request reads true.
 *
 * @example
 * const watch = watchSending(dispatcher);
 * try { await request(url, { dispatcher: watch.dispatcher, method: 'POST', body }); }
 * catch (err) { if (watch.surelyNotSent) … it is safe to send it again … }
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';

/** What one request's transport did. */
export interface SendWatch {
  /** Send the request through this one (it is the caller's dispatcher with the watch added). */
  readonly dispatcher: Dispatcher;
  /** True while no byte of the request can have been handed to a socket; read it once the request settled. */
  readonly surelyNotSent: boolean;
}

/** The watch's one bit, shared by its dispatcher and the handlers it wraps. */
class Watch implements SendWatch {
  dispatcher!: Dispatcher;
  surelyNotSent = true;
}

/**
 * Passes every event on to the request's own handler, and notes when undici is about to write the request. The new
 * (undici 7) handler API: `compose` gives interceptors handlers of this form (dispatcher/dispatcher.js:5 `wrapInterceptor`).
 */
class SendingHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #watch: Watch;

  constructor(handler: Dispatcher.DispatchHandler, watch: Watch) {
    this.#handler = handler;
    this.#watch = watch;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#handler.onRequestStart?.(controller, context);
    // Reached only when the handler did not throw; undici writes next unless the request was aborted in it.
    if (!controller.aborted) this.#watch.surelyNotSent = false;
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex) {
    this.#handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, message?: string) {
    this.#handler.onResponseStart?.(controller, statusCode, headers, message);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#handler.onResponseError?.(controller, error);
  }
}

/**
 * A watch for one request: send it through `watch.dispatcher`, then read `watch.surelyNotSent`. Every request sent
 * through that dispatcher counts (one that may have left makes it false), so make one watch per request. The watch's
 * dispatcher shares `dispatcher`'s pools and connections; closing it closes them, so leave that to their owner.
 */
export function watchSending(dispatcher: Dispatcher): SendWatch {
  const watch = new Watch();
  watch.dispatcher = dispatcher.compose(
    (dispatch) => (options, handler) => dispatch(options, new SendingHandler(handler, watch)),
  );
  return watch;
}
