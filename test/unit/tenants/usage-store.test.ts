// The SQLite UsageStore: a day's rows back exactly as saved (also after a reopen), upserts, rows it
// cannot take skipped and reported without costing the others, and retention once per UTC day.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { openStateDb } from '#src/state/index.ts';
import { oldestKeptDay, openUsageStore, SqliteUsageStore, usageRowProblem, type UsageRow } from '#src/tenants/index.ts';
import { utcDay } from '#src/tenants/limits.ts';
import { keptLog, tempStateDir } from '#test/fixtures/state-dirs.ts';

const DAY_MS = 86_400_000;
const NOON = Date.parse('2026-12-02T12:00:00Z');
const row = (
  tenant: string,
  model: string,
  day: string,
  requests: number,
  promptTokens = requests * 100,
  completionTokens = requests * 10,
): UsageRow => ({
  tenant,
  model,
  day,
  requests,
  promptTokens,
  completionTokens,
});

function withStore(run: (store: SqliteUsageStore, reopen: () => SqliteUsageStore, clock: ManualClock) => void): void {
  const t = tempStateDir();
  const clock = new ManualClock(NOON);
  const opened: SqliteUsageStore[] = [];
  const open = (): SqliteUsageStore => {
    const store = openUsageStore(t.dir, keptLog().log, clock);
    assert.ok(store);
    opened.push(store);
    return store;
  };
  try {
    run(
      open(),
      () => {
        for (const s of opened) s.close();
        return open();
      },
      clock,
    );
  } finally {
    for (const s of opened) s.close();
    t.remove();
  }
}

test('no state_dir: no store', () => {
  assert.equal(openUsageStore(undefined, keptLog().log), undefined);
});

test('a reopened store restores a day’s rows exactly, and only that day’s', () =>
  withStore((store, reopen) => {
    const today = [
      row('alice', 'llama-3.1-8b', '2026-12-02', 7, 12_345, 678),
      row('alice', 'qwen3:8b', '2026-12-02', 1),
      row('bob', 'llama-3.1-8b', '2026-12-02', 9_007_199, 9_007_199_254_740_991, 0),
    ];
    store.save([...today, row('alice', 'llama-3.1-8b', '2026-12-01', 3)]);
    assert.deepEqual(store.load('2026-12-02'), today);
    const again = reopen();
    assert.deepEqual(again.load('2026-12-02'), today);
    assert.deepEqual(again.load('2026-12-01'), [row('alice', 'llama-3.1-8b', '2026-12-01', 3)]);
    assert.deepEqual(again.load('2026-11-30'), []);
  }));

test('save replaces the stored row of its tenant, model and day', () =>
  withStore((store) => {
    store.save([row('a', 'm', '2026-12-02', 1), row('a', 'n', '2026-12-02', 1)]);
    store.save([row('a', 'm', '2026-12-02', 5)]);
    assert.deepEqual(store.load('2026-12-02'), [row('a', 'm', '2026-12-02', 5), row('a', 'n', '2026-12-02', 1)]);
  }));

test('a row the store cannot take is skipped and reported; the others are written', () => {
  const t = tempStateDir();
  const skipped: string[] = [];
  const store = new SqliteUsageStore(openStateDb(t.dir, keptLog()), {
    clock: new ManualClock(NOON),
    onInvalid: (r, problem) => skipped.push(`${r.tenant}: ${problem}`),
  });
  try {
    store.save([row('good', 'm', '2026-12-02', 2), row('bad', 'm', '2026-12-02', -1), row('worse', 'm', '12/02/2026', 1)]);
    assert.deepEqual(store.load('2026-12-02'), [row('good', 'm', '2026-12-02', 2)]);
    assert.equal(skipped.length, 2);
    assert.match(skipped[0] ?? '', /^bad: requests must be a whole number/);
    assert.match(skipped[1] ?? '', /^worse: day must be a UTC day/);
    assert.throws(() => store.load('yesterday'), /"YYYY-MM-DD"/);
  } finally {
    store.close();
    t.remove();
  }
});

test('usageRowProblem', () => {
  const ok = row('t', 'm', '2026-12-02', 1);
  const cases: [Partial<UsageRow>, RegExp | undefined][] = [
    [{}, undefined],
    [{ tenant: '' }, /tenant/],
    [{ model: '' }, /model/],
    [{ day: '2026-02-30' }, /day must be/],
    [{ day: '2026-12-2' }, /day must be/],
    [{ requests: 1.5 }, /requests/],
    [{ promptTokens: Number.NaN }, /promptTokens/],
    [{ completionTokens: 2 ** 60 }, /completionTokens/],
    [{ completionTokens: -3 }, /completionTokens/],
  ];
  for (const [change, expected] of cases) {
    const problem = usageRowProblem({ ...ok, ...change });
    if (expected === undefined) assert.equal(problem, undefined, JSON.stringify(change));
    else assert.match(problem ?? '', expected, JSON.stringify(change));
  }
});

test('utcDay and oldestKeptDay', () => {
  assert.equal(utcDay(Date.parse('2026-12-02T23:59:59.999Z')), '2026-12-02');
  assert.equal(utcDay(Date.parse('2026-12-03T00:00:00Z')), '2026-12-03');
  assert.equal(oldestKeptDay('2026-12-02'), '2026-10-24');
  assert.equal(oldestKeptDay('2026-03-01', 2), '2026-02-28');
  assert.equal(oldestKeptDay('2026-03-01', 1), '2026-03-01');
});

test('days past retention are deleted with the first save of a UTC day, at most once that day', () =>
  withStore((store, _reopen, clock) => {
    const old = row('t', 'm', oldestKeptDay('2026-12-02'), 1);
    const older = row('t', 'm', '2026-10-23', 1);
    store.save([old, older]);
    assert.deepEqual(store.load(older.day), [], 'pruned by the first save');
    assert.deepEqual(store.load(old.day), [old], 'the oldest kept day stays');
    // Written again the same day: not pruned again until the next UTC day.
    store.save([older]);
    assert.deepEqual(store.load(older.day), [older]);
    clock.advance(DAY_MS);
    store.save([]);
    assert.deepEqual(store.load(older.day), []);
    assert.deepEqual(store.load(old.day), [], 'a day later, that day is past retention too');
  }));
