import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const file = join(import.meta.dirname, 'RESULTS.md');

/**
 * Writes one bench's section of bench/RESULTS.md (between `<!-- name -->` and `<!-- /name -->`), keeping the other
 * benches' sections: each bench writes what it measured and nothing else.
 *
 * @example writeResultsSection('soap', '# SOAP, ours against node-soap\n…')
 */
export function writeResultsSection(name: string, text: string): void {
  const start = `<!-- ${name} -->`;
  const end = `<!-- /${name} -->`;
  const section = `${start}\n${text.trim()}\n${end}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from !== -1 && to > from
      ? current.slice(0, from) + section + current.slice(to + end.length)
      : `${current.trimEnd()}${current.trim() === '' ? '' : '\n\n'}${section}\n`;
  writeFileSync(file, next.endsWith('\n') ? next : `${next}\n`);
}
