import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeFaults, NO_FAULTS, parseFaultPatch } from '#src/sim/faults.ts';

test('merges a patch into the current faults, keeping the other switches', () => {
  const first = mergeFaults(NO_FAULTS, { inference: 'hang' });
  const second = mergeFaults(first, { health: 'fail', midstreamAfterChunks: 5 });
  assert.deepEqual(second, { ...NO_FAULTS, inference: 'hang', health: 'fail', midstreamAfterChunks: 5 });
});

test('accepts every documented fault value', () => {
  for (const patch of [
    { inference: 'midstream_reset', midstreamAfterChunks: 0 },
    { inference: 'slow_headers', slowHeadersMs: 50 },
    { models: 'no_data' },
    { models: 'empty' },
    { health: 'hang' },
    {},
  ]) {
    assert.equal(parseFaultPatch(patch).ok, true, JSON.stringify(patch));
  }
});

test('rejects unknown switches, unknown values and negative numbers with a message', () => {
  for (const patch of [{ inference: 'explode' }, { nope: 1 }, { slowHeadersMs: -1 }, 'none', null]) {
    const parsed = parseFaultPatch(patch);
    assert.equal(parsed.ok, false, JSON.stringify(patch));
    if (!parsed.ok) assert.ok(parsed.message.length > 0);
  }
});
