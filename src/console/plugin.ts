import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../core/errors.ts';
import { sendError } from '../http/error-handler.ts';
import { type Asset, type ConsoleBundle, loadConsole } from './assets.ts';

const staticDir = join(import.meta.dirname, 'static');

/**
 * The policy of every console response: nothing inline but the import map (allowed by its hash), nothing from
 * another origin, never framed.
 */
export function contentSecurityPolicy(importMapHash: string): string {
  return [
    "default-src 'self'",
    `script-src 'self' ${importMapHash}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

const immutable = 'public, max-age=31536000, immutable';

function sendAsset(reply: FastifyReply, asset: Asset | undefined, what: string): FastifyReply {
  // Sent here rather than thrown: the error handler would drop the console's headers.
  if (!asset) return sendError(reply, new ApiError('not_found', `No console file ${what}.`));
  return reply.header('cache-control', immutable).type(asset.type).send(asset.body);
}

/**
 * The web console (docs/people-and-console.md#the-console) at /console: a Preact + htm app served as native ES modules, no build step.
 * Its files are read on the first console request. Asset URLs carry a digest of every file, so they are cached for
 * good and a changed console is fetched anew; the page itself is revalidated on each load. None of these routes is
 * part of the API's OpenAPI document.
 *
 * @example registerConsole(app) // then open http://127.0.0.1:8080/console
 */
export function registerConsole(app: FastifyInstance): void {
  let bundle: ConsoleBundle | undefined;
  const load = (): ConsoleBundle => {
    bundle ??= loadConsole(staticDir);
    return bundle;
  };
  const schema = { hide: true };
  // The page loads dozens of files (its modules, the vendor modules, the icon): their request lines are `debug`, the
  // page's and the API's `info` (src/http/request-log.ts). A failed one is logged as any failure.
  const asset = { schema, config: { requestLogLevel: 'debug' as const } };

  app.register(async (scope) => {
    // On every console answer, a 404 included.
    scope.addHook('onRequest', (_request, reply, done) => {
      reply.headers({
        'content-security-policy': contentSecurityPolicy(load().importMapHash),
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
        'cache-control': 'no-store',
      });
      done();
    });

    const page = (_request: unknown, reply: FastifyReply) =>
      reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(load().indexHtml);
    scope.get('/console', { schema }, page);
    // Client-side routes (/console/t/acme/keys, …) all get the page; the app reads the path.
    scope.get('/console/*', { schema }, page);

    scope.get<{ Params: { version: string; '*': string } }>('/console/assets/:version/*', asset, (request, reply) => {
      const { version, '*': file } = request.params;
      const { files, version: current } = load();
      return sendAsset(reply, version === current ? files.get(file) : undefined, file);
    });

    // `preact.mjs`, or a module tree's `graphql/language/parser.mjs`: a key of the map read once, never a path on disk.
    scope.get<{ Params: { version: string; '*': string } }>('/console/vendor/:version/*', asset, (request, reply) => {
      const { version, '*': file } = request.params;
      const { vendor, version: current } = load();
      return sendAsset(reply, version === current ? vendor.get(file) : undefined, file);
    });
  });
}
