// The one switch book as a table: one ticket per node, whoever asks (a request's switch, the
// reconciler, an admin), with the reason a refused ask is given; and the in-process book's keeping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayTake, SwitchTickets, type SwitchTicket } from '#src/nodes/index.ts';

const load = (model: string, by: SwitchTicket['by'], loaded = false): SwitchTicket => ({
  model,
  action: 'load',
  by,
  loaded,
  victim: undefined,
});

const ROWS: readonly {
  name: string;
  current: SwitchTicket | undefined;
  ask: Pick<SwitchTicket, 'model' | 'action' | 'by'>;
  ok: boolean;
  reason?: RegExp;
}[] = [
  { name: 'a free node grants a request switch', current: undefined, ask: load('b', 'request'), ok: true },
  { name: 'a free node grants a reconciler load', current: undefined, ask: load('b', 'reconciler'), ok: true },
  {
    name: 'a request switch under way refuses a reconciler load',
    current: load('b', 'request'),
    ask: load('c', 'reconciler'),
    ok: false,
    reason: /loading b for a request/,
  },
  {
    name: 'a reconciler load under way refuses a request switch',
    current: load('c', 'reconciler'),
    ask: load('b', 'request'),
    ok: false,
    reason: /loading c for the reconciler/,
  },
  {
    name: 'an admin unload under way refuses an admin load',
    current: { model: 'a', action: 'unload', by: 'admin', loaded: false, victim: undefined },
    ask: load('b', 'admin'),
    ok: false,
    reason: /unloading a for an admin/,
  },
  {
    name: 'a loaded switch still catching up with the listing holds the ticket',
    current: load('b', 'request', true),
    ask: load('c', 'request'),
    ok: false,
    reason: /listing catching up/,
  },
  {
    name: "another replica's switch (its claim in the store) refuses and is named",
    current: { ...load('b', 'request'), replica: 'r1' },
    ask: load('c', 'admin'),
    ok: false,
    reason: /loading b for a request on replica r1; one at a time \(asked: load c for admin\)/,
  },
  {
    name: 'the same model asked again is still one at a time',
    current: load('b', 'reconciler'),
    ask: load('b', 'admin'),
    ok: false,
  },
];

for (const row of ROWS) {
  test(`switch book: ${row.name}`, () => {
    const verdict = mayTake(row.current, row.ask);
    assert.equal(verdict.ok, row.ok);
    if (!verdict.ok && row.reason !== undefined) assert.match(verdict.reason, row.reason);
  });
}

test('the in-process book keeps one ticket per node, marks it loaded, and gives it back only for its own model', () => {
  const book = new SwitchTickets();
  assert.equal(book.take('r', load('b', 'request')).ok, true);
  assert.equal(book.take('r', load('c', 'reconciler')).ok, false);
  assert.equal(book.take('s', load('c', 'reconciler')).ok, true, 'another node is its own');
  book.markLoaded('r', 'b');
  assert.equal(book.current('r')?.loaded, true);
  book.release('r', 'c');
  assert.equal(book.current('r')?.model, 'b', 'another model cannot release it');
  book.release('r', 'b');
  assert.equal(book.current('r'), undefined);
  assert.deepEqual(
    book.held().map(([node]) => node),
    ['s'],
  );
});
