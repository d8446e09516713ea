// The latest run's tables go between the doc's markers, headings one level down, the prose around
// them untouched; a second splice replaces the first; a doc or results file without its markers or
// title is refused with what is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spliceLatest } from '../../../bench/latest-into-docs.ts';

const DOC =
  '# Performance\n\nprose\n\n## Latest results\n\n<!-- latest:begin (tool) -->\nold\n<!-- latest:end -->\n\n## After\n\nmore prose\n';
const RUN = '# Switchyard benchmark — 2026-12-03T09:00:00Z\n\nMachine: 2 cores.\n\n## Targets\n\n| a | b |\n\n### Sub\n';

test('the run goes between the markers, headings demoted, the prose kept; a second splice replaces the first', () => {
  const once = spliceLatest(DOC, RUN);
  assert.equal(
    once,
    '# Performance\n\nprose\n\n## Latest results\n\n<!-- latest:begin (tool) -->\nRun of 2026-12-03T09:00:00Z.\n\nMachine: 2 cores.\n\n### Targets\n\n| a | b |\n\n#### Sub\n<!-- latest:end -->\n\n## After\n\nmore prose\n',
  );
  assert.equal(spliceLatest(once, RUN.replace('09:00', '10:00')), once.replace('09:00', '10:00'));
});

test('a doc without its markers, or results without a title, is refused naming what is missing', () => {
  assert.throws(() => spliceLatest('# no markers\n', RUN), /no "<!-- latest:begin … <!-- latest:end -->" pair of markers/);
  assert.throws(() => spliceLatest(DOC, 'no title\n'), /no "# " title line/);
});
