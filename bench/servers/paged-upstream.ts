/**
 * A GraphQL upstream whose every answer is a page of about PAGE_BYTES (default 9.8 MB) of records saying there is a
 * next page: what bench/event-loop.ts feeds Interchange's paginated receives with (PAD_CHARS: each record's padding,
 * default 1,000; 90 gives ~86,000 records a page). In a process of its own, so that
 * writing the pages costs the gateway's event loop nothing. Prints {"url": "…"} once it listens on 127.0.0.1.
 */
import { pagedUpstream } from '../../test/support/limit-upstreams.ts';

const upstream = await pagedUpstream({
  pageBytes: Number(process.env.PAGE_BYTES ?? 9_800_000),
  padChars: Number(process.env.PAD_CHARS ?? 1000),
});
process.once('SIGTERM', () => upstream.close().then(() => process.exit(0)));
console.log(JSON.stringify({ url: upstream.url }));
