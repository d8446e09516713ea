// One model's queue as plain data: the order it serves given arrivals, classes, weights and costs;
// virtual time when a tenant goes idle and returns; aging; who is shed from a full queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TenantPriority } from '#src/core/tenant-class.ts';
import { FairQueue } from '#src/scheduler/fair-queue.ts';
import { IndexedHeap } from '#src/scheduler/indexed-heap.ts';

interface Tenant {
  readonly priority: TenantPriority;
  readonly weight: number;
  readonly cost: number;
}

const TENANTS: Readonly<Record<string, Tenant>> = {
  A: { priority: 'standard', weight: 1, cost: 100 },
  B: { priority: 'standard', weight: 1, cost: 100 },
  H: { priority: 'standard', weight: 2, cost: 100 },
  X: { priority: 'standard', weight: 1, cost: 300 },
  I: { priority: 'interactive', weight: 1, cost: 100 },
  Z: { priority: 'batch', weight: 1, cost: 100 },
};

/** A script: "A*3" queues three of A's requests, "serve 2" serves the head twice, "drop A" removes A's newest. */
function run(script: readonly string[], agingMs = 0): string {
  const queue = new FairQueue<string>();
  const served: string[] = [];
  const queued: string[] = [];
  let n = 0;
  for (const step of script) {
    const [verb, arg] = step.split(' ');
    if (verb === 'serve') {
      for (let i = 0; i < Number(arg); i += 1) {
        const head = queue.head();
        if (head === undefined) break;
        assert.ok(queue.served(head, 0));
        served.push(head.split('#')[0] ?? '');
      }
      continue;
    }
    if (verb === 'drop') {
      const newest = queued.filter((item) => item.startsWith(`${arg ?? ''}#`) && queue.classOf(item) !== undefined).at(-1);
      assert.ok(newest !== undefined && queue.remove(newest, 0));
      continue;
    }
    const [name = '', count = '1'] = (verb ?? '').split('*');
    const tenant = TENANTS[name];
    assert.ok(tenant !== undefined, name);
    for (let i = 0; i < Number(count); i += 1) {
      const item = `${name}#${n++}`;
      queued.push(item);
      queue.push(item, {
        tenant: { name, priority: tenant.priority, weight: tenant.weight },
        cost: tenant.cost,
        enteredAtMs: 0,
        agingMs,
      });
    }
  }
  return served.join(' ');
}

const orders: readonly (readonly [string, readonly string[], string])[] = [
  ['interactive before standard before batch, whatever the arrival order', ['Z*2', 'A*2', 'I*2', 'serve 6'], 'I I A A Z Z'],
  ['equal weights and costs take turns', ['A*3', 'B*3', 'serve 6'], 'A B A B A B'],
  ['weight 2 gets twice the share of weight 1', ['H*6', 'B*3', 'serve 9'], 'H B H H B H H B H'],
  ['a request of 300 tokens counts as three of 100', ['X*3', 'B*6', 'serve 9'], 'X B B B X B B B X'],
  ['a tenant with 500 queued delays a newcomer by at most one request', ['A*500', 'serve 3', 'B', 'serve 3'], 'A A A B A A'],
  [
    'a tenant idle while another was served banks no credit: it takes turns, no burst',
    ['A*10', 'serve 6', 'B*3', 'serve 7'],
    'A A A A A A B A B A B A A',
  ],
  [
    'a tenant back after its lane emptied starts level with the others',
    ['A*2', 'serve 2', 'B*2', 'A*2', 'serve 4'],
    'A A B A B A',
  ],
  ['a request that left unserved is not charged to its tenant', ['A*2', 'drop A', 'A', 'B*2', 'serve 4'], 'A B A B'],
];

for (const [what, script, expected] of orders) {
  test(`order: ${what}`, () => {
    assert.equal(run(script), expected);
  });
}

test('virtual time: each class keeps its own, and an empty lane starts over', () => {
  assert.equal(run(['I*2', 'A*2', 'serve 1', 'I', 'serve 4']), 'I I I A A', 'interactive stays ahead of standard');
  assert.equal(run(['A*4', 'serve 4', 'B*2', 'A*2', 'serve 4']), 'A A A A B A B A', 'a lane served empty forgets who had more');
});

type Ticket = Parameters<FairQueue<string>['push']>[1];
const ticket = (name: string, priority: TenantPriority, enteredAtMs: number, agingMs = 10): Ticket => ({
  tenant: { name, priority, weight: 1 },
  cost: 100,
  enteredAtMs,
  agingMs,
});

/** Serves the whole queue at `nowMs`, head after head. */
function drain(queue: FairQueue<string>, nowMs: number): string[] {
  const order: string[] = [];
  for (let head = queue.head(); head !== undefined; head = queue.head()) {
    queue.served(head, nowMs);
    order.push(head);
  }
  return order;
}

test("aging raises a tenant's oldest request one class per agingMs unserved, where it takes its turn", () => {
  const queue = new FairQueue<string>();
  queue.push('z', ticket('Z', 'batch', 0));
  queue.push('z2', ticket('Z', 'batch', 0));
  queue.push('never', ticket('N', 'batch', 0, 0));
  queue.push('i1', ticket('I', 'interactive', 0));
  queue.push('i2', ticket('I', 'interactive', 0));
  const classes = (): string => ['z', 'z2', 'never', 'i1'].map((item) => queue.classOf(item)).join(' ');
  const table: readonly (readonly [number, string])[] = [
    [9, 'batch batch batch interactive'],
    [10, 'standard batch batch interactive'],
    [19, 'standard batch batch interactive'],
    [20, 'interactive batch batch interactive'],
    [1_000, 'interactive batch batch interactive'],
  ];
  for (const [nowMs, expected] of table) {
    queue.age(nowMs);
    assert.equal(classes(), expected, `at ${nowMs}ms (only Z's oldest ages; agingMs 0 never does)`);
  }
  assert.deepEqual(
    drain(queue, 1_000),
    ['z', 'i1', 'i2', 'never', 'z2'],
    'raised, it goes by its tags (the older first on a tie)',
  );
});

test("aging: the tenant's next request ages from when it became the oldest, never from its arrival", () => {
  const queue = new FairQueue<string>();
  for (let i = 0; i < 100; i += 1) queue.push(`z${i}`, ticket('Z', 'batch', 0));
  queue.push('i', ticket('I', 'interactive', 0));
  queue.age(1_000);
  const raised = (): number =>
    [...Array(100).keys()].filter((i) => ['standard', 'interactive'].includes(queue.classOf(`z${i}`) ?? '')).length;
  assert.equal(raised(), 1, 'a flood competes above its class with one request');
  assert.equal(queue.classOf('z0'), 'interactive', 'long overdue: two classes at once');
  assert.equal(queue.head(), 'z0');
  queue.served('z0', 1_000);
  queue.age(1_009);
  assert.equal(queue.classOf('z1'), 'batch');
  queue.age(1_010);
  assert.equal(queue.classOf('z1'), 'standard');
  assert.equal(raised(), 1);
  assert.equal(queue.head(), 'i', 'interactive stays first');
});

test('aging: a batch tenant served regularly is never raised', () => {
  const queue = new FairQueue<string>();
  for (let i = 0; i < 5; i += 1) queue.push(`z${i}`, ticket('Z', 'batch', 0));
  for (let i = 0; i < 5; i += 1) {
    queue.age(i * 9);
    assert.equal(queue.classOf(`z${i}`), 'batch', `z${i}`);
    queue.served(`z${i}`, i * 9);
  }
});

test('aging: the oldest request leaving unserved hands the clock to the next, from then', () => {
  const queue = new FairQueue<string>();
  queue.push('a', ticket('Z', 'batch', 0));
  queue.push('b', ticket('Z', 'batch', 0));
  queue.remove('a', 7);
  queue.age(16);
  assert.equal(queue.classOf('b'), 'batch');
  queue.age(17);
  assert.equal(queue.classOf('b'), 'standard');
});

test('aging: a long overdue request climbs two classes at once; the report keeps its tenant class', () => {
  const queue = new FairQueue<string>();
  queue.push('z', { tenant: { name: 'Z', priority: 'batch', weight: 1 }, cost: 1, enteredAtMs: 0, agingMs: 10 });
  queue.push('s', { tenant: { name: 'S', priority: 'standard', weight: 1 }, cost: 1, enteredAtMs: 5, agingMs: 10 });
  queue.age(1_000);
  assert.deepEqual([queue.classOf('z'), queue.classOf('s')], ['interactive', 'interactive']);
  assert.equal(queue.head(), 'z', 'the older one first');
  assert.deepEqual(queue.report(), { byClass: { interactive: 0, standard: 1, batch: 1 }, byTenant: { Z: 1, S: 1 } });
});

test('shedding: the newest of the lowest class below the newcomer makes room; none for the lowest', () => {
  const queue = new FairQueue<string>();
  const push = (item: string, priority: TenantPriority, enteredAtMs = 0): void =>
    queue.push(item, { tenant: { name: item, priority, weight: 1 }, cost: 10, enteredAtMs, agingMs: 10 });
  push('z1', 'batch');
  push('s1', 'standard');
  push('z2', 'batch', 5);
  push('s2', 'standard', 5);
  const table: readonly (readonly [TenantPriority, string | undefined])[] = [
    ['interactive', 'z2'],
    ['standard', 'z2'],
    ['batch', undefined],
  ];
  for (const [priority, victim] of table) assert.equal(queue.victimFor(priority), victim, priority);
  queue.age(10);
  assert.equal(queue.classOf('z1'), 'standard', 'z1 aged');
  assert.equal(queue.victimFor('standard'), 'z2', 'the one still batch');
  queue.remove('z2', 10);
  assert.equal(queue.victimFor('standard'), undefined, 'an aged request has earned its class');
  assert.equal(queue.victimFor('interactive'), 's2', 'the newest standard-class request, by arrival');
  queue.remove('s2', 10);
  queue.remove('s1', 10);
  assert.equal(queue.victimFor('interactive'), 'z1', 'then the aged one');
});

test('served and remove answer false for a request that is not queued; size counts what waits', () => {
  const queue = new FairQueue<string>();
  queue.push('a', { tenant: { name: 'A', priority: 'standard', weight: 1 }, cost: 0, enteredAtMs: 0, agingMs: 0 });
  queue.push('a', { tenant: { name: 'A', priority: 'standard', weight: 1 }, cost: 0, enteredAtMs: 0, agingMs: 0 });
  assert.equal(queue.size, 1, 'pushed once');
  assert.equal(queue.remove('b', 0), false);
  assert.equal(queue.served('a', 0), true);
  assert.equal(queue.served('a', 0), false);
  assert.equal(queue.size, 0);
  assert.equal(queue.head(), undefined);
});

test('IndexedHeap: pops in order while items leave from anywhere (checked against a sorted list)', () => {
  let seed = 7;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const heap = new IndexedHeap<{ v: number; id: number }>((a, b) => a.v < b.v || (a.v === b.v && a.id < b.id));
  const reference: { v: number; id: number }[] = [];
  for (let i = 0; i < 2_000; i += 1) {
    const roll = random();
    if (roll < 0.5 || reference.length === 0) {
      const item = { v: Math.floor(random() * 50), id: i };
      heap.push(item);
      reference.push(item);
    } else if (roll < 0.75) {
      const item = reference[Math.floor(random() * reference.length)];
      assert.ok(item !== undefined && heap.remove(item));
      reference.splice(reference.indexOf(item), 1);
    } else {
      reference.sort((a, b) => a.v - b.v || a.id - b.id);
      const least = reference.shift();
      assert.equal(heap.peek(), least);
      if (least !== undefined) heap.remove(least);
    }
    assert.equal(heap.size, reference.length);
  }
});
