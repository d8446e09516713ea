// The fallback tally (what a replica used without the store, for the rejoin) and the store's day
// candidates: tables over plain data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { candidateAt, dayCandidates, FallbackTally } from '#src/tenants/index.ts';

const DAY = 86_400_000;
const NOON = Date.UTC(2026, 11, 2, 12, 0, 0);
const D2 = { day: '2026-12-02', startMs: Date.UTC(2026, 11, 2) };
const D3 = { day: '2026-12-03', startMs: Date.UTC(2026, 11, 3) };

test("dayCandidates / candidateAt: the day before, of, after the estimate; the store's clock picks", () => {
  const c = dayCandidates(NOON);
  assert.deepEqual(c.days, ['2026-12-01', '2026-12-02', '2026-12-03']);
  assert.equal(c.startMs, D2.startMs);
  const cases: [string, number, 0 | 1 | 2][] = [
    ['the store agrees', NOON, 1],
    ['the store is 13 h behind: yesterday', NOON - 13 * 3_600_000, 0],
    ['the store is 12 h ahead: tomorrow, at midnight exactly', D2.startMs + DAY, 2],
    ['the last ms of the day', D2.startMs + DAY - 1, 1],
    ['more than a day off: the last candidate', NOON + 3 * DAY, 2],
    ['more than a day behind: the first candidate', NOON - 3 * DAY, 0],
  ];
  for (const [what, store, expected] of cases) assert.equal(candidateAt(c, store), expected, what);
  assert.deepEqual(dayCandidates(D2.startMs).days[1], '2026-12-02', 'midnight is the new day');
  assert.deepEqual(dayCandidates(D2.startMs - 1).days[1], '2026-12-01');
});

type Step = ['admit', string, number] | ['settle', string, number, typeof D2, number];

test('take: the fallback usage per tenant sealed into batches (minute estimate, tokens per day)', () => {
  const cases: [string, Step[], number, { tenant: string; requests: number; tokens: number; days: [string, number][] }[]][] = [
    ['nothing used: no batch', [], NOON, []],
    [
      'two requests settled: their tokens on the day',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON + 10, D2, 30],
        ['admit', 'a', NOON + 20],
        ['settle', 'a', NOON + 30, D2, 12],
      ],
      NOON + 40,
      [{ tenant: 'a', requests: 2, tokens: 42, days: [['2026-12-02', 42]] }],
    ],
    [
      'one still open: its request counts, its tokens come when it settles',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 5],
        ['admit', 'a', NOON],
      ],
      NOON,
      [{ tenant: 'a', requests: 2, tokens: 5, days: [['2026-12-02', 5]] }],
    ],
    [
      'nothing served: the request counts, no tokens',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 0],
      ],
      NOON,
      [{ tenant: 'a', requests: 1, tokens: 0, days: [] }],
    ],
    [
      'two tenants, apart',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 7],
        ['admit', 'b', NOON],
        ['settle', 'b', NOON, D2, 9],
      ],
      NOON,
      [
        { tenant: 'a', requests: 1, tokens: 7, days: [['2026-12-02', 7]] },
        { tenant: 'b', requests: 1, tokens: 9, days: [['2026-12-02', 9]] },
      ],
    ],
    [
      "across midnight (the store's day): two day keys",
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 10],
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D3, 20],
      ],
      NOON,
      [
        {
          tenant: 'a',
          requests: 2,
          tokens: 30,
          days: [
            ['2026-12-02', 10],
            ['2026-12-03', 20],
          ],
        },
      ],
    ],
    [
      'the minute long past: only the day is left',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 10],
      ],
      NOON + 5 * 60_000,
      [{ tenant: 'a', requests: 0, tokens: 0, days: [['2026-12-02', 10]] }],
    ],
    [
      'half of the previous minute still inside the window',
      [
        ['admit', 'a', NOON],
        ['settle', 'a', NOON, D2, 10],
      ],
      NOON + 90_000,
      [{ tenant: 'a', requests: 1, tokens: 5, days: [['2026-12-02', 10]] }],
    ],
  ];
  for (const [what, steps, at, expected] of cases) {
    const tally = new FallbackTally();
    for (const s of steps) {
      if (s[0] === 'admit') tally.admitted(s[1], s[2]);
      else tally.settled(s[1], s[2], s[3], s[4]);
    }
    const batches = tally.take(at, 'b1').map((b) => ({
      tenant: b.tenant,
      requests: b.requests,
      tokens: b.tokens,
      days: b.days.map((d): [string, number] => [d.day, d.tokens]),
    }));
    assert.deepEqual(batches, expected, what);
  }
});

test('a batch is given again under the same id until confirmed; what comes meanwhile waits for the next', () => {
  const tally = new FallbackTally();
  tally.admitted('a', NOON);
  tally.settled('a', NOON, D2, 100);
  const first = tally.take(NOON, 'b1');
  assert.deepEqual(
    first.map((b) => [b.id, b.days[0]?.tokens]),
    [['b1', 100]],
  );
  // More usage while the first batch is out (its reply lost): it is not added to the sealed one.
  tally.settled('a', NOON + 1, D2, 7);
  assert.equal(tally.unconfirmedTokens('a'), 107);
  const again = tally.take(NOON + 2, 'b2');
  assert.deepEqual(again, first, 'the same batch, unchanged, under its first id');
  tally.confirmed('a', 'b2');
  assert.equal(tally.take(NOON + 3, 'b3')[0]?.id, 'b1', 'confirming another id drops nothing');
  tally.confirmed('a', 'b1');
  const next = tally.take(NOON + 4, 'b4');
  assert.deepEqual(
    next.map((b) => [b.id, b.days[0]?.tokens]),
    [['b4', 7]],
    'then the usage that came meanwhile',
  );
  tally.confirmed('a', 'b4');
  assert.equal(tally.pending(), false);
  assert.equal(tally.unconfirmedTokens('a'), 0);
  assert.deepEqual(tally.take(NOON + 5, 'b5'), []);
});
