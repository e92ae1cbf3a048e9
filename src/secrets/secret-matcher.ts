import { type SecretForm, secretForms } from './secret-forms.ts';

/** What a secret becomes wherever upstream text would show it (docs/security.md#redaction). */
export const redactedMark = '[REDACTED]';

/** The shortest start of a secret's form that counts as showing it, when a cut leaves one at the end of a text. */
const minimumShownStart = 4;

/** How a form's texts are written into a regular expression: as they are, or as JSON.stringify writes them. */
interface Rendering {
  text(text: string): string;
  /** What may stand between the atoms of a spread form. */
  whitespace: string;
}

/** Letters and digits as themselves, every other UTF-16 unit as `\uXXXX`: valid and literal in any regex context. */
function regexLiteral(text: string): string {
  let source = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    source += /[A-Za-z0-9]/.test(char) ? char : `\\u${text.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return source;
}

const plain: Rendering = { text: regexLiteral, whitespace: '\\s*' };

/** Inside serialized JSON: tab, newline, form feed and carriage return are escaped, vertical tab as `\u000b`. */
const inJson: Rendering = {
  text: (text) => regexLiteral(JSON.stringify(text).slice(1, -1)),
  whitespace: '(?:\\s|\\\\[tnfr]|\\\\u000b)*',
};

function atomSource(atom: readonly string[], rendering: Rendering): string {
  return atom.length === 1 ? rendering.text(atom[0]) : `(?:${atom.map(rendering.text).join('|')})`;
}

/** A form as a regex source; one of a short secret is matched case-sensitively, inside the caseless whole. */
function formSource(form: SecretForm, rendering: Rendering): string {
  const source = form.atoms.map((atom) => atomSource(atom, rendering)).join(form.spread ? rendering.whitespace : '');
  return form.caseless ? source : `(?-i:${source})`;
}

/**
 * A form's start of `minimumShownStart` atoms or more at the very end of a text, as a cut leaves it: each later atom
 * or the end (`a b c d (?:e|$) (?:f|$) $`), so the source grows with the form, not with its square.
 */
function cutTailSource(form: SecretForm): string | undefined {
  if (form.atoms.length <= minimumShownStart) return undefined;
  const whitespace = form.spread ? plain.whitespace : '';
  const head = form.atoms.slice(0, minimumShownStart).map((atom) => atomSource(atom, plain));
  const rest = form.atoms.slice(minimumShownStart).map((atom) => `(?:${whitespace}${atomSource(atom, plain)}|${whitespace}$)`);
  const source = `${head.join(whitespace)}${rest.join('')}$`;
  return form.caseless ? source : `(?-i:${source})`;
}

const shortestText = (form: SecretForm) => form.atoms.reduce((sum, atom) => sum + Math.min(...atom.map((t) => t.length)), 0);

/**
 * A regular expression of sources, each once. Its own error would quote the source, and so the secrets: it is replaced
 * by one that does not (forms of windowed secrets stay far below what the compiler refuses).
 */
function compile(sources: Iterable<string>, flags: string): RegExp {
  try {
    return new RegExp([...new Set(sources)].join('|'), flags);
  } catch {
    throw new Error('The secrets of the integration could not be compiled into a matcher.');
  }
}

interface Compiled {
  anywhere: RegExp;
  inJson: RegExp;
}

/**
 * The secrets of one integration as one matcher: every form an upstream may echo them in (secret-forms.ts) in one
 * case-insensitive regular expression, longest form first so that a form holding another is replaced whole, and the
 * forms a search needs as JSON.stringify writes them, to search a serialized reply in one pass. Compiled on first use.
 *
 * No quantifier applies to anything holding a quantifier, and no text of an atom is a prefix of another one of the
 * same atom, so a match attempt never backtracks more than one whitespace run: matching is linear in the text.
 *
 * @example new SecretMatcher(['tok-1234567890']).redact('denied: TOK-1234567890') // 'denied: [REDACTED]'
 */
export class SecretMatcher {
  /** A matcher of no secrets: it finds nothing and changes nothing. */
  static readonly none = new SecretMatcher([]);

  /** The secret values, as given: what a worker thread builds its own matcher from. */
  readonly secrets: readonly string[];
  readonly #forms: SecretForm[];
  #compiled: Compiled | undefined;
  #cutTail: RegExp | null | undefined;

  constructor(secrets: readonly string[]) {
    this.secrets = secrets;
    this.#forms = secretForms(secrets).sort((a, b) => shortestText(b) - shortestText(a));
  }

  /** Whether there is no secret to look for. */
  get empty(): boolean {
    return this.#forms.length === 0;
  }

  /** Whether a serialized JSON text may show a secret (a reply that does is walked and redacted). */
  mayShowIn(json: string): boolean {
    return !this.empty && this.#regexes().inJson.test(json);
  }

  /** The text with every form of every secret replaced by `[REDACTED]`. */
  redact(text: string): string {
    return this.empty ? text : text.replace(this.#regexes().anywhere, redactedMark);
  }

  /** The text with a start of a form (4 characters or more) that ends it replaced too: what an excerpt's cut leaves. */
  redactCutTail(text: string): string {
    if (this.#cutTail === undefined) {
      const tails = this.#forms.flatMap((form) => cutTailSource(form) ?? []);
      this.#cutTail = tails.length > 0 ? compile(tails, 'iu') : null;
    }
    const found = this.#cutTail?.exec(text);
    return found ? text.slice(0, found.index) + redactedMark : text;
  }

  #regexes(): Compiled {
    this.#compiled ??= {
      anywhere: compile(
        this.#forms.map((form) => formSource(form, plain)),
        'giu',
      ),
      inJson: compile(
        this.#forms.filter((form) => !form.unsearched).map((form) => formSource(form, inJson)),
        'iu',
      ),
    };
    return this.#compiled;
  }
}
