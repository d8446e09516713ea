import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_REDIAL, redialDelayMs } from '#src/mesh/gossip/backoff.ts';

test('redial delay doubles from 0.5 s to a 30 s cap, jittered within [d/2, d]', () => {
  const table: { attempt: number; random: number; ms: number }[] = [
    { attempt: 0, random: 0, ms: 250 },
    { attempt: 0, random: 0.999999, ms: 500 },
    { attempt: 1, random: 0, ms: 500 },
    { attempt: 2, random: 0.5, ms: 1_500 },
    { attempt: 5, random: 0, ms: 8_000 },
    { attempt: 6, random: 0.999999, ms: 30_000 },
    { attempt: 7, random: 0, ms: 15_000 },
    { attempt: 1_000, random: 0.5, ms: 22_500 },
  ];
  for (const row of table) {
    assert.equal(
      redialDelayMs(row.attempt, DEFAULT_REDIAL, () => row.random),
      row.ms,
      `attempt ${row.attempt}, random ${row.random}`,
    );
  }
});

test('redial delay survives odd inputs: negative or fractional attempts, random outside [0, 1)', () => {
  assert.equal(
    redialDelayMs(-3, DEFAULT_REDIAL, () => 0),
    250,
  );
  assert.equal(
    redialDelayMs(1.7, DEFAULT_REDIAL, () => 0),
    500,
  );
  assert.equal(
    redialDelayMs(0, DEFAULT_REDIAL, () => 7),
    500,
  );
  assert.equal(
    redialDelayMs(0, DEFAULT_REDIAL, () => -1),
    250,
  );
});
