/**
 * A preload (`NODE_OPTIONS=--import …/clock-ahead.ts`) that sets this process's clock `IX_TEST_CLOCK_OFFSET_MS` ahead:
 * `Date.now()` and `new Date()` read the offset clock, as on a machine whose clock drifted. The database's clock and
 * the other processes' are untouched: a test runs one instance with it beside instances without.
 */
const offsetMs = Number(process.env.IX_TEST_CLOCK_OFFSET_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);

class OffsetDate extends RealDate {
  constructor(...args: ConstructorParameters<typeof Date> | []) {
    if (args.length === 0) super(realNow() + offsetMs);
    else super(...(args as ConstructorParameters<typeof Date>));
  }

  static override now(): number {
    return realNow() + offsetMs;
  }
}

globalThis.Date = OffsetDate as DateConstructor;
