// Issue 28, 1,000 nodes × 50 models: each listed model was built as `{ id, ...entry }`, which adds
// the entry's fields one by one past the room the literal had and puts three of them in a separate
// property array: 80 bytes a model instead of 64, 50,000 models held at once. Checked by the heap a
// parsed listing holds (a forced GC before and after), not by a timing or an RSS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseModelList } from '#src/discovery/parse-model-list.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('a parsed listing holds about 72 bytes a model (the record and its slot), not 88', () => {
  const count = 20_000;
  // The ids (and the body) exist before the measurement: only what the parse keeps is counted.
  const body = {
    object: 'list',
    data: Array.from({ length: count }, (_, i) => ({ id: `model-${i}`, object: 'model', max_model_len: 8192 })),
  };
  for (let round = 0; round < 3; round++) parseModelList('vllm', body);
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = parseModelList('vllm', body);
  gc();
  gc();
  const perModel = (process.memoryUsage().heapUsed - before) / count;
  assert.equal(kept.ok && kept.models.length, count);
  assert.ok(perModel < 80, `${perModel.toFixed(1)} bytes a model`);
});
