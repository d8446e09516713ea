// Copies the latest run's tables (bench/results/latest.md) into docs/performance.md, between its
// `<!-- latest:begin` and `<!-- latest:end -->` markers, headings one level down and the run's
// title as the first line: the reference keeps its prose, the figures follow the bench.
//
//   node bench/latest-into-docs.ts [--results bench/results/latest.md] [--doc docs/performance.md]

import { readFileSync, writeFileSync } from 'node:fs';

const BEGIN = '<!-- latest:begin';
const END = '<!-- latest:end -->';

/** Pure: `doc` with the text between its markers replaced by `latest` (headings demoted); throws naming what is missing. */
export function spliceLatest(doc: string, latest: string): string {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`the doc has no "${BEGIN} … ${END}" pair of markers`);
  const title = /^# (.+)$/m.exec(latest);
  if (title === null) throw new Error('the results have no "# " title line');
  const body = latest
    .slice(title.index + title[0].length)
    .trim()
    .replace(/^(#{2,5}) /gm, '#$1 ');
  const afterBegin = doc.indexOf('\n', begin) + 1;
  return `${doc.slice(0, afterBegin)}Run of ${(title[1] ?? '').replace(/^Switchyard benchmark — /, '')}.\n\n${body}\n${doc.slice(end)}`;
}

if (import.meta.main) {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({
    options: {
      results: { type: 'string', default: 'bench/results/latest.md' },
      doc: { type: 'string', default: 'docs/performance.md' },
    },
  });
  const doc = readFileSync(values.doc, 'utf8');
  writeFileSync(values.doc, spliceLatest(doc, readFileSync(values.results, 'utf8')));
  process.stdout.write(`${values.doc}: latest results from ${values.results}\n`);
}
