import { ApiError } from '../../core/errors.ts';

/** Levels of element nesting in one upstream XML answer (docs/limits.md#upstreams); the root element is level 1. */
export const maxXmlDepth = 256;
/** Attributes of one element in an upstream XML answer (docs/limits.md#upstreams); namespace declarations count. */
export const maxXmlAttributes = 256;
/**
 * Elements and attributes together in one upstream XML answer. A 10 MiB answer of ordinary records holds about
 * 700,000 of them; past a million, turning an answer into objects (and those into the JSON reply) starts to hold
 * the event loop for longer than a fraction of a second, which no single request may do.
 */
export const maxXmlNodes = 1_000_000;
/**
 * Distinct element and attribute names (as written, prefix included) in one upstream XML answer. A schema-shaped
 * answer uses a few hundred; every new name costs V8 a new property key and object shape, so a million distinct
 * names take seconds to read and to serialise where a million repeats of a few names take a tenth of that.
 */
export const maxXmlNames = 10_000;
/**
 * Distinct layouts in one upstream XML answer, checked while reading (`readXml`). An element's layout is the
 * sequence of its attribute and child names, each once, in document order, after namespace prefixes are removed;
 * this counts the nodes of the trie all layouts make. V8 makes a hidden class for each such node, so elements that
 * each list the same few names in a new order (or a new subset of them) cost as much as a million distinct names.
 * Schema-shaped answers have a few dozen.
 */
export const maxXmlLayouts = 20_000;

/** An upstream XML answer beyond one of the bounds above: `upstream_invalid_response` whatever its HTTP status. */
export class XmlBoundExceeded extends ApiError {
  constructor(what: string) {
    super('upstream_invalid_response', `The upstream XML answer ${what}, which is refused.`);
  }
}

/**
 * Refuses XML beyond the bounds above (nesting, attributes of one element, elements and attributes in all, distinct
 * names) with `upstream_invalid_response` naming the bound. One forward pass without backtracking, before any
 * parser sees the text: comments, CDATA sections, processing instructions and quoted attribute values are skipped
 * whole, so a `<` or `>` inside them is not markup.
 *
 * It only counts and never judges well-formedness: an unclosed construct ends the scan and a stray end tag just
 * closes a level, leaving the verdict on malformed XML to the parser that follows.
 *
 * @example checkXmlBounds('<a><b c="1"/></a>') // passes: depth 2, one attribute, three nodes, three names
 */
export function checkXmlBounds(text: string): void {
  const names = new Set<string>();
  let depth = 0;
  let nodes = 0;
  let at = text.indexOf('<');
  while (at !== -1) {
    const next = text.charCodeAt(at + 1);
    let resume: number;
    if (next === 0x21 /* ! */) {
      if (text.startsWith('<!--', at)) resume = after(text, '-->', at + 4);
      else if (text.startsWith('<![CDATA[', at)) resume = after(text, ']]>', at + 9);
      else resume = at + 2; // a declaration: the parser refuses it
    } else if (next === 0x3f /* ? */) {
      resume = after(text, '?>', at + 2);
    } else if (next === 0x2f /* / */) {
      if (depth > 0) depth--;
      resume = after(text, '>', at + 2);
    } else {
      if (depth === maxXmlDepth) throw new XmlBoundExceeded(`nests elements deeper than ${maxXmlDepth} levels`);
      const tag = scanStartTag(text, at + 1, names);
      if (tag.attributes > maxXmlAttributes)
        throw new XmlBoundExceeded(`has an element with more than ${maxXmlAttributes} attributes`);
      nodes += 1 + tag.attributes;
      if (nodes > maxXmlNodes) throw new XmlBoundExceeded(`holds more than ${maxXmlNodes} elements and attributes`);
      if (names.size > maxXmlNames)
        throw new XmlBoundExceeded(`uses more than ${maxXmlNames} distinct element and attribute names`);
      if (!tag.selfClosing) depth++;
      resume = tag.end;
    }
    if (resume === -1) return;
    at = text.indexOf('<', resume);
  }
}

/**
 * Scans the start tag whose name begins at `from`: its name tokens (the element's, then one per attribute) go into
 * `names`, stopping at one attribute past the limit; returns the attribute count, whether the tag ends with `/>`, and
 * where the scan resumes (-1: the tag never ends).
 */
function scanStartTag(text: string, from: number, names: Set<string>): { attributes: number; selfClosing: boolean; end: number } {
  let tokens = 0;
  let tokenStart = -1;
  let slash = false;
  for (let at = from; at < text.length; at++) {
    const c = text.charCodeAt(at);
    const delimiter =
      c === 0x3e /* > */ ||
      c === 0x22 /* " */ ||
      c === 0x27 /* ' */ ||
      c === 0x20 ||
      c === 0x09 ||
      c === 0x0a ||
      c === 0x0d ||
      c === 0x3d /* = */ ||
      c === 0x2f; /* / */
    if (!delimiter) {
      if (tokenStart === -1) {
        tokenStart = at;
        // The element's name is the first token; one attribute past the limit is enough to refuse.
        if (++tokens > maxXmlAttributes + 1) return { attributes: tokens - 1, selfClosing: false, end: -1 };
      }
      continue;
    }
    if (tokenStart !== -1) {
      names.add(text.slice(tokenStart, at));
      tokenStart = -1;
    }
    if (c === 0x3e) return { attributes: Math.max(tokens - 1, 0), selfClosing: slash, end: at + 1 };
    slash = c === 0x2f;
    if (c === 0x22 || c === 0x27) {
      at = text.indexOf(text[at], at + 1);
      if (at === -1) break;
    }
  }
  return { attributes: Math.max(tokens - 1, 0), selfClosing: false, end: -1 };
}

/** The index just past the first `close` at or after `from`, or -1 when there is none. */
function after(text: string, close: string, from: number): number {
  const at = text.indexOf(close, from);
  return at === -1 ? -1 : at + close.length;
}
