import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SecretMatcherCache } from '../../src/secrets/matcher-cache.ts';
import { secretForms } from '../../src/secrets/secret-forms.ts';
import { SecretMatcher } from '../../src/secrets/secret-matcher.ts';

/**
 * docs/security.md#redaction: nothing an upstream sends back may reveal a secret, and upstreams do not only echo a credential as they
 * got it: they decode the Authorization header, lower-case it, URL- or JSON-encode it, log it spread out. These pin
 * each form the matcher must find, inside a longer text and inside the serialized reply it searches first.
 */

const token = 'tok/9fQ+2xZ=7kLm&p<q';
const b64 = (text: string, alphabet: BufferEncoding = 'base64') => Buffer.from(text, 'utf8').toString(alphabet);

/**
 * The characters of `base64(prefix + secret + suffix)` fixed by the secret's bytes alone: computed from the actual
 * encoding of the whole text, they must all be gone.
 */
function secretPart(prefix: string, secret: string, suffix: string, alphabet: BufferEncoding = 'base64'): string {
  const before = Buffer.byteLength(prefix);
  const encoded = b64(prefix + secret + suffix, alphabet);
  return encoded.slice(Math.ceil((before * 8) / 6), Math.floor(((before + Buffer.byteLength(secret)) * 8) / 6));
}

/** An echo of the token, and what is left of it once redacted (the text around the token's own form stays). */
const echoes: Array<[string, string, string]> = [
  ['as sent', token, '[REDACTED]'],
  ['lower-cased', token.toLowerCase(), '[REDACTED]'],
  ['upper-cased', token.toUpperCase(), '[REDACTED]'],
  ['with spaces between its characters', [...token].join(' '), '[REDACTED]'],
  ['with newlines and tabs between its characters', [...token].join('\n\t'), '[REDACTED]'],
  ['URL-encoded', encodeURIComponent(`Bearer ${token}`), 'Bearer%20[REDACTED]'],
  ['URL-encoded, lower-case hex', encodeURIComponent(token).toLowerCase(), '[REDACTED]'],
  ['form-encoded', new URLSearchParams({ authorization: `Bearer ${token}` }).toString(), 'authorization=Bearer+[REDACTED]'],
  ['URL-encoded only where it must be', encodeURI(token), '[REDACTED]'],
  ['JSON-escaped, as PHP writes it', JSON.stringify(token).replaceAll('/', '\\/'), '"[REDACTED]"'],
  ['JSON-escaped, as Go writes it', JSON.stringify(token).replaceAll('&', '\\u0026').replaceAll('<', '\\u003c'), '"[REDACTED]"'],
  ['XML-escaped', token.replaceAll('&', '&amp;').replaceAll('<', '&lt;'), '[REDACTED]'],
  ['in base64, alone', b64(token), '[REDACTED]'],
  ['in base64url, alone', b64(token, 'base64url'), '[REDACTED]'],
];

const base64Echoes: Array<[string, string, string]> = [
  ['Bearer ', token, ''],
  ['xBearer ', token, 'x'],
  ['xxBearer ', token, 'xy'],
  ['{"authorization":"Bearer ', token, '"}'],
];

describe('the forms of a secret an upstream may echo', () => {
  const matcher = new SecretMatcher([token]);

  for (const [label, echo, left] of echoes) {
    test(`${label}: replaced, and found in the serialized reply`, () => {
      const text = `upstream says: ${echo} (end)`;
      assert.equal(matcher.redact(text), `upstream says: ${left} (end)`, JSON.stringify(echo));
      assert.ok(matcher.mayShowIn(JSON.stringify({ error: { message: text } })), 'the search finds it');
    });
  }

  for (const alphabet of ['base64', 'base64url'] as const) {
    for (const [prefix, secret, suffix] of base64Echoes) {
      test(`${alphabet} of ${JSON.stringify(`${prefix}…${suffix}`)}: the characters fixed by the secret are replaced`, () => {
        const echo = b64(prefix + secret + suffix, alphabet);
        const redacted = matcher.redact(`got ${echo}.`);
        assert.ok(redacted.includes('[REDACTED]'), redacted);
        assert.ok(!redacted.includes(secretPart(prefix, secret, suffix, alphabet)), redacted);
        // At most the 3 characters at each end that also hold bits of the text around the secret stay.
        const kept = redacted.slice(4, -1).replace('[REDACTED]', '');
        assert.ok(kept.length <= b64(prefix).length + b64(suffix).length + 6, redacted);
        assert.ok(matcher.mayShowIn(JSON.stringify({ echo })));
      });
    }
  }

  test('text that holds no form of the secret is left as it is, and the search finds nothing', () => {
    for (const text of ['tok/9fQ+2xZ', 'TOK 9FQ 2XZ 7KLM', b64('Bearer another-token-entirely'), 'p<q & tok/9f']) {
      assert.equal(matcher.redact(text), text);
      assert.equal(matcher.mayShowIn(JSON.stringify({ text })), false, text);
    }
  });

  test('a secret shorter than 8 characters is matched exactly: transformed, it would hide ordinary text', () => {
    const short = new SecretMatcher(['s3cr3t']);
    assert.equal(short.redact('bad s3cr3t'), 'bad [REDACTED]');
    for (const text of ['S3CR3T', 's 3 c r 3 t', b64('s3cr3t')]) assert.equal(short.redact(text), text);
  });

  test('an Authorization value is also found in parts: Bearer and Basic credentials, the decoded user:password', () => {
    const basic = `Basic ${b64('alice:correct-horse-battery')}`;
    const bearer = 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig-Zm9vYmFy';
    const matcher = new SecretMatcher([basic, bearer]);
    for (const echo of [
      basic,
      basic.toLowerCase(),
      b64('alice:correct-horse-battery'),
      'alice:correct-horse-battery',
      'CORRECT-HORSE-BATTERY',
      b64('correct-horse-battery'),
      bearer,
      'eyJhbGciOiJIUzI1NiJ9.e30.sig-Zm9vYmFy',
      encodeURIComponent('eyJhbGciOiJIUzI1NiJ9.e30.sig-Zm9vYmFy'),
    ]) {
      const text = `echo: ${echo}!`;
      assert.equal(matcher.redact(text), 'echo: [REDACTED]!', echo);
      assert.ok(matcher.mayShowIn(JSON.stringify([text])), echo);
    }
    // The user name alone is no secret.
    assert.equal(matcher.redact('user alice'), 'user alice');
  });

  test('a cut excerpt loses a start of any form (4 characters or more) that ends it', () => {
    const cut = (text: string) => matcher.redactCutTail(matcher.redact(text));
    assert.equal(cut(`denied for ${token.toUpperCase().slice(0, 9)}`), 'denied for [REDACTED]');
    assert.equal(cut(`denied for ${encodeURIComponent(token).slice(0, 12)}`), 'denied for [REDACTED]');
    assert.equal(cut(`denied for ${[...token.slice(0, 6)].join(' ')}`), 'denied for [REDACTED]');
    assert.equal(cut(`denied for ${b64(token).slice(0, 8)}`), 'denied for [REDACTED]');
    // Three characters are not counted as showing it (they are too common); the middle of a text is no cut.
    assert.equal(cut('denied for tok'), 'denied for tok');
    assert.equal(cut(`denied for ${token.slice(0, 9)} here`), `denied for ${token.slice(0, 9)} here`);
  });

  test('a secret of 16 KiB, sent and echoed in any form, is replaced to its last character', () => {
    const long = Array.from({ length: 16_384 }, (_, i) => 'aB3$é/ +'[(i * 7919) % 8]).join('');
    const matcher = new SecretMatcher([long]);
    for (const echo of [
      long,
      long.toUpperCase(),
      encodeURIComponent(long),
      JSON.stringify(long).slice(1, -1).replaceAll('/', '\\/'),
    ]) {
      const redacted = matcher.redact(`<${echo}>`);
      assert.match(redacted, /^<(\[REDACTED\])+>$/, redacted.slice(0, 200));
      assert.ok(matcher.mayShowIn(JSON.stringify({ echo })));
    }
    // Matched in windows of 1,024 characters: an echo cut at either end is still found (its first or last window).
    for (const cut of [long.slice(0, 2100), long.slice(-2100)]) {
      assert.ok(matcher.mayShowIn(JSON.stringify({ cut })));
      const shown = matcher.redact(cut).split('[REDACTED]');
      assert.ok(shown.every((left) => left.length < 1100));
    }
  });
});

describe('letter case: every character that has one, in a secret upper- or lower-cased', () => {
  test('is replaced, also where the case folds apart from the character (ı upper-cased is I, ß is SS, İ lower-cased is i̇)', () => {
    // Every code point whose toUpperCase or toLowerCase differs from it, each in a secret of its own: the property
    // test below found ı (U+0131), which the caseless matching alone (simple case folding) does not take for I.
    const missed: string[] = [];
    let checked = 0;
    for (let code = 0x20; code < 0x30000; code++) {
      if (code >= 0xd800 && code < 0xe000) continue;
      const char = String.fromCodePoint(code);
      if (char.toUpperCase() === char && char.toLowerCase() === char) continue;
      checked++;
      const secret = `ab${char}cdefgh`;
      const matcher = new SecretMatcher([secret]);
      for (const echo of [secret.toUpperCase(), secret.toLowerCase()]) {
        if (matcher.redact(`<${echo}>`) !== '<[REDACTED]>') missed.push(`U+${code.toString(16)}: ${echo}`);
      }
    }
    assert.ok(checked > 2000, `${checked} characters with a case`);
    assert.deepEqual(missed, []);
  });
});

describe('property: whatever the secret and the transform, no form survives', () => {
  const secrets = fc.string({
    minLength: 8,
    maxLength: 48,
    unit: fc.oneof(fc.constantFrom(...'aZ09+/=%&<>"\\ -_.~:é€😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  });
  const around = fc.string({ maxLength: 12, unit: fc.constantFrom(...'ab :=,{}"\n') });
  const transforms: Array<[string, (secret: string) => string]> = [
    ['as sent', (s) => s],
    ['lower-cased', (s) => s.toLowerCase()],
    ['upper-cased', (s) => s.toUpperCase()],
    ['spread', (s) => [...s].join(' ')],
    ['URL-encoded', encodeURIComponent],
    ['form-encoded', (s) => new URLSearchParams({ s }).toString().slice(2)],
    ['JSON-escaped', (s) => JSON.stringify(s).slice(1, -1)],
    [
      'JSON-escaped to ASCII',
      (s) =>
        JSON.stringify(s)
          .slice(1, -1)
          .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ],
  ];

  test('a transformed echo is replaced in the text and found in its serialization', () => {
    fc.assert(
      fc.property(secrets, fc.constantFrom(...transforms), around, around, (secret, [, transform], before, after) => {
        // Lone surrogates are no text an encoder can write (encodeURIComponent throws on them).
        fc.pre(secret.isWellFormed());
        const matcher = new SecretMatcher([secret]);
        const echo = transform(secret);
        const text = before + echo + after;
        assert.ok(!matcher.redact(text).includes(echo), JSON.stringify({ secret, echo }));
        assert.ok(matcher.mayShowIn(JSON.stringify({ text })), JSON.stringify({ secret, echo }));
      }),
      { numRuns: 500 },
    );
  });

  test('inside a longer base64 text, at any alignment, the characters fixed by the secret are replaced', () => {
    fc.assert(
      fc.property(secrets, around, around, fc.constantFrom('base64', 'base64url' as const), (secret, before, after, alphabet) => {
        fc.pre(secret.isWellFormed());
        const matcher = new SecretMatcher([secret]);
        const echo = b64(before + secret + after, alphabet);
        assert.ok(
          !matcher.redact(`(${echo})`).includes(secretPart(before, secret, after, alphabet)),
          JSON.stringify({ secret, before }),
        );
        assert.ok(matcher.mayShowIn(JSON.stringify({ echo })));
      }),
      { numRuns: 300 },
    );
  });

  test('no text of an atom is a prefix of another of the same atom, and no spread atom starts with whitespace', () => {
    // What keeps matching linear: an atom matches in one way at most, and a whitespace run is the separator's alone.
    fc.assert(
      fc.property(fc.array(secrets, { minLength: 1, maxLength: 3 }), (list) => {
        for (const form of secretForms(list)) {
          for (const atom of form.atoms) {
            // "A prefix" as the matcher sees it: under its own caseless matching (the `iu` flags: Unicode's simple
            // case folding), not toLowerCase's full mapping, which makes `İ` and its lower case `i̇` the same text.
            for (const [i, a] of atom.entries()) {
              const startsWithA = new RegExp(`^${a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'iu');
              for (const [j, b] of atom.entries()) assert.ok(i === j || !startsWithA.test(b), JSON.stringify(atom));
            }
            if (form.spread) assert.ok(!/^\s/.test(atom[0]), JSON.stringify(atom));
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('hostile texts: near misses that would make a backtracking pattern run for ever', () => {
  // Each input is a long run of partial matches that never complete: with nested quantifiers or ambiguous
  // alternatives the match attempts would grow exponentially. The timeout is only a backstop for such a regression.
  const secret = 'pass word%\\&"é-1234 end';
  const matcher = new SecretMatcher([secret]);
  const visible = [...secret].filter((c) => c !== ' ');
  const inputs: Array<[string, string]> = [
    ['whitespace runs between all but the last character', visible.slice(0, -1).join(' '.repeat(2000)).repeat(20)],
    ['percent escapes', '%25%5C%26%22'.repeat(50_000)],
    ['backslashes', '\\'.repeat(500_000)],
    ['entities', '&amp;&quot;&#38;'.repeat(40_000)],
    ['base64 near misses', b64(secret).slice(0, -3).repeat(20_000)],
    [
      'the secret less its last character, in every case',
      (secret.slice(0, -1) + secret.toUpperCase().slice(0, -1)).repeat(20_000),
    ],
  ];

  for (const [label, input] of inputs) {
    test(label, { timeout: 60_000 }, () => {
      assert.equal(matcher.redact(input), input);
      assert.equal(matcher.mayShowIn(JSON.stringify({ input })), false);
      const excerpt = input.slice(0, 1024);
      assert.equal(matcher.redactCutTail(excerpt).length <= excerpt.length + 10, true);
    });
  }
});

describe('SecretMatcherCache', () => {
  test('one matcher per secret set, the least recently used dropped beyond the bound', () => {
    const cache = new SecretMatcherCache(2);
    const a = cache.get(['secret-a-1234']);
    assert.equal(cache.get(['secret-a-1234']), a);
    assert.equal(cache.get([]), SecretMatcher.none);
    const b = cache.get(['secret-b-1234']);
    cache.get(['secret-a-1234']);
    cache.get(['secret-c-1234']);
    assert.equal(cache.size, 2);
    assert.equal(cache.get(['secret-a-1234']), a);
    assert.notEqual(cache.get(['secret-b-1234']), b);
  });
});
