// The usage flusher on an injected clock: one write per interval with only the rows that changed,
// a failed write kept in memory and retried with backoff (never later than the interval), and a
// last write at stop.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { retryDelayMs, RETRY_FIRST_MS, USAGE_FLUSH_INTERVAL_MS, UsageFlusher, type UsageRow } from '#src/tenants/index.ts';
import { keptLog } from '#test/fixtures/state-dirs.ts';

const row = (tenant: string, requests: number): UsageRow => ({
  tenant,
  model: 'm',
  day: '2026-12-02',
  requests,
  promptTokens: requests * 10,
  completionTokens: requests,
});

function rig(options: { failing?: () => boolean } = {}) {
  const clock = new ManualClock();
  const saves: UsageRow[][] = [];
  const ledger: { rows: UsageRow[] } = { rows: [] };
  const { log, lines } = keptLog();
  const saved: number[] = [];
  const flusher = new UsageFlusher({
    clock,
    log,
    rows: () => ledger.rows,
    store: {
      save: (rows) => {
        if (options.failing?.() === true) throw new Error('disk full');
        saves.push([...rows]);
      },
    },
    onSaved: (n) => saved.push(n),
  });
  return { clock, saves, ledger, lines, saved, flusher };
}

test('the interval is documented as 10 s (what a crash loses at most)', () => {
  assert.equal(USAGE_FLUSH_INTERVAL_MS, 10_000);
});

test('one write per interval, with only the rows that changed since the last one', () => {
  const { clock, saves, ledger, saved, flusher } = rig();
  ledger.rows = [row('a', 1), row('b', 1)];
  flusher.start();
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS - 1);
  assert.deepEqual(saves, [], 'nothing before the interval');
  clock.advance(1);
  assert.deepEqual(saves, [[row('a', 1), row('b', 1)]]);
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.equal(saves.length, 1, 'nothing changed: nothing written');
  ledger.rows = [row('a', 2), row('b', 1)];
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves.at(-1), [row('a', 2)]);
  assert.deepEqual(saved, [2, 1]);
  assert.equal(clock.pendingTimers(), 1);
  flusher.stop();
});

test('a write that fails is logged and its rows go with the next try', () => {
  let failing = true;
  const { clock, saves, ledger, lines, flusher } = rig({ failing: () => failing });
  ledger.rows = [row('a', 1)];
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, []);
  assert.match(lines.at(-1)?.message ?? '', /could not be written.*kept in memory, retrying in/);
  failing = false;
  ledger.rows = [row('a', 1), row('b', 4)];
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, [[row('a', 1), row('b', 4)]]);
  flusher.stop();
});

test('rows that cannot be read are logged; nothing is written that interval, the next one writes', () => {
  const { clock, saves, lines, flusher } = rig();
  const broken: { throws: boolean } = { throws: true };
  const reading = new UsageFlusher({
    clock,
    log: (level, fields, message) => lines.push({ level, fields, message }),
    rows: () => {
      if (broken.throws) throw new Error('ledger gone');
      return [row('a', 1)];
    },
    store: { save: (rows) => void saves.push([...rows]) },
  });
  reading.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, []);
  assert.match(lines.at(-1)?.message ?? '', /could not be read/);
  broken.throws = false;
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, [[row('a', 1)]]);
  reading.stop();
  flusher.stop();
});

test('stop writes what changed since the last interval, once, and ends the interval', () => {
  const { clock, saves, ledger, flusher } = rig();
  ledger.rows = [row('a', 1)];
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  ledger.rows = [row('a', 3)];
  assert.equal(flusher.stop(), true);
  assert.deepEqual(saves, [[row('a', 1)], [row('a', 3)]]);
  assert.equal(clock.pendingTimers(), 0);
  ledger.rows = [row('a', 9)];
  flusher.stop();
  flusher.start();
  clock.advance(10 * USAGE_FLUSH_INTERVAL_MS);
  assert.equal(saves.length, 2, 'nothing after stop');
});

test('rows marked as already stored (restored at start) are not written again until they change', () => {
  const { clock, saves, ledger, flusher } = rig();
  ledger.rows = [row('a', 5), row('b', 2)];
  flusher.markWritten([row('a', 5), row('b', 2)]);
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, []);
  ledger.rows = [row('a', 6), row('b', 2)];
  flusher.stop();
  assert.deepEqual(saves, [[row('a', 6)]]);
});

test('a ledger that hands over only the rows changed since its last call: rows a failed write left are written with the next', () => {
  const clock = new ManualClock();
  const saves: UsageRow[][] = [];
  const failing = { yes: true };
  const handed: UsageRow[][] = [[row('a', 1), row('b', 1)], [row('b', 2)], []];
  const flusher = new UsageFlusher({
    clock,
    log: keptLog().log,
    rows: () => handed.shift() ?? [],
    store: {
      save: (rows) => {
        if (failing.yes) throw new Error('disk full');
        saves.push([...rows]);
      },
    },
  });
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, []);
  failing.yes = false;
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, [[row('a', 1), row('b', 2)]], 'a from the failed write, b as the ledger has it now');
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.equal(saves.length, 1, 'nothing left over');
  flusher.stop();
});

test('retryDelayMs: the interval while writes work; after failures 1 s, doubling, never past the interval', () => {
  const table: [number, number][] = [
    [0, 10_000],
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [4, 8_000],
    [5, 10_000],
    [60, 10_000],
  ];
  for (const [failures, delay] of table) assert.equal(retryDelayMs(failures, 10_000), delay, `${failures} failures`);
  assert.equal(RETRY_FIRST_MS, 1_000);
  assert.equal(retryDelayMs(3, 1_500), 1_500, 'a short interval bounds the backoff');
});

test('while writes fail: retried with backoff, the counts kept and merged (nothing dropped), and the first write that works holds them all', () => {
  const failing = { yes: true };
  const { clock, saves, ledger, lines, flusher } = rig({ failing: () => failing.yes });
  flusher.markWritten([row('a', 1)]);
  ledger.rows = [row('a', 3), row('b', 2)];
  flusher.start();
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(
    flusher.unsaved(),
    { rows: 2, requests: 2 + 2, tokens: 22 + 22 },
    'a: 3 stored as 1 (2 requests, 22 tokens more); b: 2 requests, 22 tokens',
  );
  const tries = (): number => lines.filter((l) => /could not be written/.test(l.message)).length;
  clock.advance(RETRY_FIRST_MS);
  assert.equal(tries(), 2, 'retried after 1 s');
  clock.advance(2 * RETRY_FIRST_MS - 1);
  assert.equal(tries(), 2, 'then after 2 s, not sooner');
  clock.advance(1);
  assert.equal(tries(), 3);
  assert.deepEqual(lines.at(-1)?.fields.retry_in_ms, 4_000);
  // The ledger hands over only what changed since its last call: a's newer total, and c.
  ledger.rows = [row('a', 5), row('c', 1)];
  clock.advance(20 * USAGE_FLUSH_INTERVAL_MS);
  const gaps = lines.filter((l) => /could not be written/.test(l.message)).map((l) => Number(l.fields.retry_in_ms));
  assert.ok(
    gaps.every((ms) => ms <= USAGE_FLUSH_INTERVAL_MS),
    `never later than the interval: ${gaps.join(', ')}`,
  );
  assert.equal(flusher.unsaved().rows, 3);
  failing.yes = false;
  clock.advance(USAGE_FLUSH_INTERVAL_MS);
  assert.deepEqual(saves, [[row('a', 5), row('b', 2), row('c', 1)]], 'every row a failed write left, each at its newest total');
  assert.deepEqual(flusher.unsaved(), { rows: 0, requests: 0, tokens: 0 });
  assert.equal(clock.pendingTimers(), 1);
  clock.advance(USAGE_FLUSH_INTERVAL_MS - 1);
  assert.equal(saves.length, 1, 'back to the interval');
  flusher.stop();
});

test('stop with writes failing answers false and keeps what it could not write for another try', () => {
  const failing = { yes: true };
  const { saves, ledger, flusher } = rig({ failing: () => failing.yes });
  ledger.rows = [row('a', 2)];
  assert.equal(flusher.stop(), false);
  assert.deepEqual(flusher.unsaved(), { rows: 1, requests: 2, tokens: 22 });
  failing.yes = false;
  ledger.rows = [];
  assert.equal(flusher.flush(), true);
  assert.deepEqual(saves, [[row('a', 2)]]);
});
