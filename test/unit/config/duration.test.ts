import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatDurationMs, MAX_DURATION_MS, parseDurationMs } from '#src/config/duration.ts';

describe('parseDurationMs', () => {
  const accepted: readonly (readonly [string, number])[] = [
    ['250ms', 250],
    ['0s', 0],
    ['3s', 3_000],
    ['1.5s', 1_500],
    ['1.1s', 1_100],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1h2m3s4ms', 3_723_004],
    ['300s', 300_000],
    ['0.5m', 30_000],
  ];
  for (const [text, expectedMs] of accepted) {
    test(`reads "${text}" as ${expectedMs} ms`, () => {
      assert.deepEqual(parseDurationMs(text), { ok: true, value: expectedMs });
    });
  }

  const refused: readonly (readonly [unknown, string])[] = [
    [5, 'a bare number has no unit'],
    [1.5, 'a bare number has no unit'],
    ['5', 'must be a duration like "3s" or "250ms"'],
    ['', 'must be a duration like "3s" or "250ms"'],
    ['3 s', 'must be a duration like "3s" or "250ms"'],
    ['-3s', 'must be a duration like "3s" or "250ms"'],
    ['3sec', 'must be a duration like "3s" or "250ms"'],
    ['1d', 'must be a duration like "3s" or "250ms"'],
    ['.5s', 'must be a duration like "3s" or "250ms"'],
    ['1.5ms', 'whole number of milliseconds'],
    ['597h', 'must be at most 596h31m23s647ms'],
    [true, 'must be a duration like "3s" or "250ms"'],
  ];
  for (const [input, fragment] of refused) {
    test(`refuses ${JSON.stringify(input)} with a message saying "${fragment}"`, () => {
      const result = parseDurationMs(input);
      assert.equal(result.ok, false);
      assert.ok(!result.ok && result.message.includes(fragment), JSON.stringify(result));
    });
  }

  test('accepts the longest duration a Node.js timer supports', () => {
    assert.deepEqual(parseDurationMs(formatDurationMs(MAX_DURATION_MS)), { ok: true, value: MAX_DURATION_MS });
  });
});

describe('formatDurationMs', () => {
  const cases: readonly (readonly [number, string])[] = [
    [0, '0s'],
    [250, '250ms'],
    [1_500, '1s500ms'],
    [90_000, '1m30s'],
    [300_000, '5m'],
    [3_600_000, '1h'],
  ];
  for (const [ms, text] of cases) {
    test(`writes ${ms} ms as "${text}", which reads back to the same value`, () => {
      assert.equal(formatDurationMs(ms), text);
      assert.deepEqual(parseDurationMs(text), { ok: true, value: ms });
    });
  }
});
