import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundedLabel, MAX_LABEL_CHARS, ModelLabels, OTHER_MODEL_LABEL } from '#src/metrics/model-label.ts';
import { idChanges } from '#src/logs/transition-log.ts';

test('a label keeps short ids whole and cuts long ones to a prefix and a hash of the whole', () => {
  const long = 'm'.repeat(10_000);
  const rows: [string, string, (label: string) => boolean][] = [
    ['short id whole', 'llama-3', (l) => l === 'llama-3'],
    ['exactly at the limit whole', 'a'.repeat(MAX_LABEL_CHARS), (l) => l === 'a'.repeat(MAX_LABEL_CHARS)],
    ['long id cut to the limit', long, (l) => l.length === MAX_LABEL_CHARS && l.startsWith('mmm') && /~[0-9a-f]{12}$/.test(l)],
    [
      'a surrogate pair is never split',
      `${'a'.repeat(114)}😀${'b'.repeat(100)}`,
      (l) => l.length <= MAX_LABEL_CHARS && !/[\ud800-\udbff](?![\udc00-\udfff])/.test(l),
    ],
  ];
  for (const [name, id, check] of rows) assert.ok(check(boundedLabel(id)), `${name}: ${boundedLabel(id)}`);
  assert.notEqual(boundedLabel(`${long}a`), boundedLabel(`${long}b`), 'ids that differ only past the cut stay distinct');
  assert.equal(boundedLabel(`${long}a`), boundedLabel(`${long}a`), 'the same id always gets the same label');
});

test('model labels are handed out up to the cap, then `_other`; configured and reserved ones always pass', () => {
  const labels = new ModelLabels({ isPinned: (model) => model === 'configured', maxLabels: 2 });
  assert.equal(labels.label('a'), 'a');
  assert.equal(labels.label('b'), 'b');
  assert.equal(labels.label('c'), OTHER_MODEL_LABEL);
  assert.equal(labels.label('a'), 'a', 'a label once given stays');
  assert.equal(labels.label('configured'), 'configured');
  assert.equal(labels.label('_unknown'), '_unknown');
  assert.equal(labels.label('d'), OTHER_MODEL_LABEL);
});

test('a listing change is logged as counts and at most ten ids', () => {
  const many = Array.from({ length: 50 }, (_, i) => `m${i}`);
  assert.deepEqual(idChanges(undefined, undefined), {});
  assert.deepEqual(idChanges(['a'], []), { added: ['a'], addedCount: 1, removed: [], removedCount: 0 });
  const fields = idChanges(many, undefined);
  assert.equal(fields.addedCount, 50);
  assert.deepEqual(fields.added, many.slice(0, 10));
});
