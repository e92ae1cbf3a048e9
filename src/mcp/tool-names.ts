import type { OfferedTool } from './backend.ts';

/** The longest tool name (docs/mcp.md; MCP 2025-11-25 asks for 1–128 characters). */
export const maxToolNameLength = 128;

// One `_` per code point outside the set: an emoji (a surrogate pair) is one character, as is a lone surrogate.
const outsideNameCharacters = /[^A-Za-z0-9_.-]/gu;

/** `<integration id>.<entry name>`, every character outside `[A-Za-z0-9_.-]` replaced by `_`, cut at 128 characters. */
function baseName(tool: OfferedTool): string {
  return `${tool.integrationId}.${tool.entry.name}`.replace(outsideNameCharacters, '_').slice(0, maxToolNameLength);
}

/** `base` with `_<n>`, the base cut so that the whole fits in 128 characters (the base is ASCII by now). */
function suffixed(base: string, n: number): string {
  const suffix = `_${n}`;
  return `${base.slice(0, maxToolNameLength - suffix.length)}${suffix}`;
}

/**
 * The MCP tool name of each offered tool, in the order given (docs/mcp.md): `<integration id>.<entry name>` with every
 * character outside `[A-Za-z0-9_.-]` replaced by `_`, at most 128 characters, unique among `tools`.
 *
 * Names that clash (after the replacement or the cut) are told apart in the order of integration id, then of the
 * catalogue: the first keeps the name, the next get `_2`, `_3`, … A name that is some tool's own comes before any
 * suffix: when `a.b_2` is a real name, the second `a.b` becomes `a.b_3`. The same tools give the same names on every
 * instance, whatever order they are passed in.
 *
 * @example toolNames([crm's 'find customer', crm's 'find/customer']) // ['crm.find_customer', 'crm.find_customer_2']
 */
export function toolNames(tools: readonly OfferedTool[]): string[] {
  const bases = tools.map(baseName);
  // By integration id (in code units), then as given: the catalogue's order within an integration.
  const id = (index: number) => tools[index].integrationId;
  const order = tools.map((_, index) => index).sort((a, b) => (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : a - b));

  const names = new Array<string>(tools.length);
  const taken = new Set<string>();
  const clashing: number[] = [];
  // Every real name is claimed first, so that no suffix takes one.
  for (const index of order) {
    if (taken.has(bases[index])) {
      clashing.push(index);
    } else {
      taken.add(bases[index]);
      names[index] = bases[index];
    }
  }
  const nextSuffix = new Map<string, number>();
  for (const index of clashing) {
    const base = bases[index];
    let n = nextSuffix.get(base) ?? 2;
    while (taken.has(suffixed(base, n))) n++;
    const name = suffixed(base, n);
    nextSuffix.set(base, n + 1);
    taken.add(name);
    names[index] = name;
  }
  return names;
}
