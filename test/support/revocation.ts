import assert from 'node:assert/strict';

/**
 * docs/api.md#api-key-format: a revoked key is refused by every running instance within 1 second of its revocation.
 *
 * Polls `refused()` every 20 ms, from now (before the revocation, while the revoking process starts)
 * until it holds, and returns how many milliseconds after the revocation the last request that was still
 * accepted had been sent; `-Infinity` when none was accepted after it. `revocation` resolves to the
 * moment the revocation was written (wall clock: `Date.parse` of the key's `revoked_at`). Measured by
 * send time, the answer excludes the revoking process's start-up and the test's own scheduling: a
 * request sent at `t` and accepted was accepted at `t` or later, so a value of 1000 or more is a real
 * breach of the bound, never noise. The ceiling only ends a test whose key is never refused.
 */
export async function acceptedAfterRevocation(
  refused: () => Promise<boolean>,
  revocation: Promise<number>,
  ceilingMs = 60_000,
): Promise<number> {
  let failure: { error: unknown } | undefined;
  revocation.catch((error: unknown) => {
    failure = { error };
  });
  let lastAccepted = Number.NEGATIVE_INFINITY;
  const giveUpAt = Date.now() + ceilingMs;
  for (;;) {
    if (failure) throw failure.error;
    const sentAt = Date.now();
    if (await refused()) break;
    lastAccepted = sentAt;
    assert.ok(Date.now() < giveUpAt, `the key was still accepted ${ceilingMs} ms after the test began to poll`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const revokedAt = await revocation;
  assert.ok(Number.isFinite(revokedAt), 'revoked_at is a timestamp');
  return lastAccepted < revokedAt ? Number.NEGATIVE_INFINITY : lastAccepted - revokedAt;
}

/** For messages: `acceptedAfterRevocation`'s answer in words. */
export function describeAcceptance(ms: number): string {
  return ms === Number.NEGATIVE_INFINITY
    ? 'refused the first request sent after the revocation'
    : `last accepted a request sent ${Math.round(ms)} ms after the revocation`;
}
