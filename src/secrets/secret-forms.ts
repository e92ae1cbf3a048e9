/**
 * The ways an upstream plausibly shows a secret it was sent (docs/security.md#redaction): the secret itself in any letter case or
 * with whitespace between its characters, URL-encoded (form encoding included), JSON- or XML-escaped, and in base64
 * or base64url, alone or inside a longer base64 text (`base64("Bearer " + token)`). Secrets shorter than
 * `transformedMinLength` characters are matched exactly: their transformed forms would hide ordinary text.
 */

/** Secrets of fewer characters (code points) are matched exactly, in one form. */
export const transformedMinLength = 8;

/**
 * Longer secrets are matched as consecutive windows of at most this many characters, each with all its forms: one
 * form of a 16 KiB secret would be too deep for the regular expression compiler, and slow to compile.
 */
export const windowLength = 1024;

/**
 * One way of writing a secret: one atom per character, each atom the texts that character may be written as (no one
 * of them a prefix of another, so an atom matches in at most one way and a match never backtracks into it).
 */
export interface SecretForm {
  atoms: readonly (readonly string[])[];
  /** Whitespace may stand between the atoms (`t o k e n`). */
  spread: boolean;
  /** Matched in any letter case. Only the exact form of a short secret is not. */
  caseless: boolean;
  /**
   * The one-pass search of a serialized reply does not look for this form (a reply it finds is redacted of every
   * form): a text showing it shows a searched form as well (a whole base64 text starts with its offset 0 form, a
   * secret holding another long one shows that one), or it is a middle window of a long secret, whose echo shows the
   * first and last windows too.
   */
  unsearched?: boolean;
}

const codePoints = (text: string) => [...text];

/**
 * A character as a change of case may write it. Matching ignores case by Unicode's simple case folding (the `iu`
 * flags), which covers most characters; what it does not is added: a case of more than one character (`ß`
 * upper-cased is `SS`, `İ` lower-cased is `i̇`) and a single one that folds apart (`ı` upper-cased is `I`, which
 * folds to `i`).
 */
function caseWritings(char: string): string[] {
  const sameCaseless = new RegExp(`^\\u{${(char.codePointAt(0) ?? 0).toString(16)}}$`, 'iu');
  const changed = [char.toUpperCase(), char.toLowerCase()].filter((text) => !sameCaseless.test(text));
  return [char, ...new Set(changed)];
}

/** Characters no URL encoder escapes (RFC 3986's unreserved but `~`, which form encoding and PHP's urlencode do). */
const unreserved = /^[A-Za-z0-9._-]$/;
const percentEncoded = (char: string) =>
  [...Buffer.from(char, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** A character as URL encoders write it: itself when an encoder may leave it, `%XX…`, `+` for a space (forms). */
function urlWritings(char: string): string[] {
  if (unreserved.test(char)) return [char];
  if (char === '%') return ['%25'];
  if (char === ' ') return [' ', '+', '%20'];
  return [char, percentEncoded(char)];
}

/** `\uXXXX` for each UTF-16 unit of the character (two for one beyond the BMP, as JSON writes it). */
const utf16Escape = (char: string) =>
  Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
const shortJsonEscapes: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * A character as JSON encoders write it inside a string: itself unless it must be escaped (`"`, `\`, controls), its
 * short escape (`\"`, PHP's `\/`…), or `\uXXXX`, which encoders use for non-ASCII (Python), for `<>&'` (Go, HTML-safe
 * modes) or for anything they must escape. Other ASCII is always written as itself.
 */
function jsonWritings(char: string): string[] {
  const code = char.codePointAt(0) ?? 0;
  const mustEscape = char === '"' || char === '\\' || code < 0x20;
  if (!mustEscape && code < 0x7f && !`/<>&'`.includes(char)) return [char];
  return [...(mustEscape ? [] : [char]), ...(shortJsonEscapes[char] ? [shortJsonEscapes[char]] : []), utf16Escape(char)];
}

const xmlEscapes: Record<string, string[]> = {
  '&': ['&amp;', '&#38;', '&#x26;'],
  '<': ['&lt;', '&#60;', '&#x3c;'],
  '>': ['>', '&gt;', '&#62;', '&#x3e;'],
  '"': ['"', '&quot;', '&#34;', '&#x22;'],
  "'": ["'", '&apos;', '&#39;', '&#x27;'],
};

/** A character as XML and HTML writers escape it in text or attributes. */
const xmlWritings = (char: string): string[] => xmlEscapes[char] ?? [char];

/**
 * The base64 characters fixed by the secret's bytes alone when it starts `offset` bytes (0 to 2) into a 3-byte group of
 * a longer encoded text: the characters that also hold bits of the bytes around it are left out.
 *
 * @example base64Inside(Buffer.from('token-1234'), 1, 'base64') // the middle of base64('x' + 'token-1234' + …)
 */
export function base64Inside(bytes: Buffer, offset: 0 | 1 | 2, alphabet: 'base64' | 'base64url'): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(alphabet);
  const firstFixed = Math.ceil((offset * 8) / 6);
  const lastFixed = Math.floor(((offset + bytes.length) * 8) / 6);
  return encoded.slice(firstFixed, lastFixed);
}

/**
 * A value that reads as an HTTP credential (`<scheme> <credentials>`, as an Authorization header holds it) is also
 * echoed in parts: the credentials alone, and for Basic the decoded `user:password` and the password.
 */
function credentialParts(value: string): string[] {
  const header = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ +(\S.*)$/.exec(value);
  if (!header) return [];
  const credentials = header[1].trimEnd();
  const parts = [credentials];
  if (/^basic /i.test(value) && /^[A-Za-z0-9+/]+={0,2}$/.test(credentials)) {
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    if (!decoded.includes('\ufffd') && decoded.includes(':')) parts.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
  }
  return parts;
}

const literal = (text: string): SecretForm => ({ atoms: codePoints(text).map((char) => [char]), spread: false, caseless: true });

/** Each character written as `writings` says, or undefined when that writes every character only as itself. */
function written(chars: readonly string[], writings: (char: string) => string[]): SecretForm | undefined {
  const atoms = chars.map(writings);
  if (atoms.every((atom, i) => atom.length === 1 && atom[0] === chars[i])) return undefined;
  return { atoms, spread: false, caseless: true };
}

/** The forms of one text of `transformedMinLength` to `windowLength` characters. */
function windowForms(chars: readonly string[]): SecretForm[] {
  const bytes = Buffer.from(chars.join(''), 'utf8');
  // Whitespace in the secret is the separator's to match, so that no atom competes with it.
  const visible = chars.filter((char) => !/\s/.test(char));
  const forms: SecretForm[] = visible.length > 0 ? [{ atoms: visible.map(caseWritings), spread: true, caseless: true }] : [];
  for (const writings of [urlWritings, jsonWritings, xmlWritings]) {
    const form = written(chars, writings);
    if (form) forms.push(form);
  }
  for (const alphabet of ['base64', 'base64url'] as const) {
    // Whole, so that a secret sent alone in base64 is replaced to its last character; its start is the offset 0 form.
    forms.push({ ...literal(bytes.toString(alphabet)), unsearched: true });
    for (const offset of [0, 1, 2] as const) forms.push(literal(base64Inside(bytes, offset, alphabet)));
  }
  return forms;
}

/** The transformed forms of a secret: of the secret itself, or of each of its windows when it is longer than one. */
function transformedForms(secret: string): SecretForm[] {
  const chars = codePoints(secret);
  const windows = Math.ceil(chars.length / windowLength);
  const forms: SecretForm[] = [];
  for (let i = 0; i < windows; i++) {
    // Windows of near-equal length, end to end: an echo of the whole secret is replaced window after window.
    const start = Math.round((i * chars.length) / windows);
    const end = Math.round(((i + 1) * chars.length) / windows);
    // Searching for the middle windows too would cost ten times as much for a secret of 16 KiB.
    const middle = i > 0 && i < windows - 1;
    forms.push(...windowForms(chars.slice(start, end)).map((form) => (middle ? { ...form, unsearched: true } : form)));
  }
  return forms;
}

const isLong = (text: string) => codePoints(text).length >= transformedMinLength;

/**
 * Every form in which the secrets given may be echoed: for each secret (and each credential part of one, when it is
 * long enough), its transformed forms when it has `transformedMinLength` characters or more, else itself exactly.
 * A secret that holds another long one is not searched for: any form of the one shows that form of the other.
 *
 * @example secretForms(['s3cr3t']) // one exact, case-sensitive form: s3cr3t is short
 */
export function secretForms(secrets: readonly string[]): SecretForm[] {
  const texts = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    texts.add(secret);
    if (isLong(secret)) for (const part of credentialParts(secret)) if (isLong(part)) texts.add(part);
  }
  const forms: SecretForm[] = [];
  for (const text of texts) {
    if (!isLong(text)) {
      forms.push({ ...literal(text), caseless: false });
      continue;
    }
    // A secret matched in windows is not: one window of it may be echoed without the other secret.
    const covered =
      codePoints(text).length <= windowLength &&
      [...texts].some((other) => other !== text && isLong(other) && text.includes(other));
    forms.push(...transformedForms(text).map((form) => (covered ? { ...form, unsearched: true } : form)));
  }
  return forms;
}
