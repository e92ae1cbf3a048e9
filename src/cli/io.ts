import { parseArgs } from 'node:util';

/** Where a command reads and writes; tests pass their own to run it in their process and read what it said. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Standard input: `users create --password-stdin` reads the password from it. */
  stdin: AsyncIterable<string | Buffer> & { readonly isTTY?: boolean };
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  stdin: process.stdin,
};

/** A mistake in how the command was called: exit code 2. `usage` is printed after the message in plain-text mode. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly usage: string | undefined;

  constructor(message: string, usage?: string) {
    super(message);
    this.usage = usage;
  }
}

/** The `--json` option, the same on every command. */
export const jsonOption = { type: 'boolean', default: false } as const;

/**
 * A command's or an action's name and the words after it. `--` ends the options wherever it stands: one before the
 * name is passed over and kept at the head of `rest`, so that every word after it stays an argument, never an option
 * (parseArgs reads it so). `optionsEnded`: the name came after `--`, so `--help` there is a name, not the option.
 */
export function splitName(args: readonly string[]): { name: string | undefined; rest: string[]; optionsEnded: boolean } {
  if (args[0] !== '--') return { name: args[0], rest: args.slice(1), optionsEnded: false };
  return { name: args[1], rest: ['--', ...args.slice(2)], optionsEnded: true };
}

/** `--json`, for a command that takes nothing else: any other option or argument is a usage error with `usageLine`. */
export function onlyJsonOption(args: string[], usageLine: string): boolean {
  try {
    return parseArgs({ args, options: { json: jsonOption } }).values.json;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), usageLine);
  }
}

/** True when `--help` or `-h` comes before any `--`. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/**
 * Answers `<group> --help` with the group's usage and `<group> <action> --help` with the action's; true when it printed.
 * An unknown action is left to the command, which refuses it.
 */
export function answerHelp(args: readonly string[], io: CliIo, groupUsage: string, actions: Record<string, string>): boolean {
  const { name: action, rest, optionsEnded } = splitName(args);
  if (!optionsEnded && (action === '--help' || action === '-h')) io.out(groupUsage);
  else if (action !== undefined && Object.hasOwn(actions, action) && wantsHelp(rest)) io.out(actions[action]);
  else return false;
  return true;
}

/** A group's usage: its actions' first lines under one heading. */
export function groupUsage(group: string, actions: Record<string, string>): string {
  const lines = Object.values(actions).map((text) => `  ${text.split('\n')[0].replace(/^usage: /, '')}`);
  return `usage: interchange ${group} <${Object.keys(actions).join('|')}> [options]\n\n${lines.join('\n')}\n\n${helpFooter}`;
}

export const helpFooter = 'Every command takes --json and --help. Exit 0 ok, 1 runtime error, 2 usage or configuration error.';

// Stored names come from API callers: a control character (a terminal escape) is shown as `?`, never sent as is.
const control = /\p{Cc}/gu;

/** Rows under a header row, each column padded to its widest cell, two spaces apart. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  // An empty cell is shown as `-`, like every absent value: a script splitting rows on blanks keeps its columns.
  const lines = [header, ...rows].map((row) => row.map((cell) => (cell === '' ? '-' : cell.replace(control, '?'))));
  const widths = header.map((_, i) => Math.max(...lines.map((row) => row[i].length)));
  return lines.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ')).join('\n');
}
