import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { createPolicy, loadBound, type SelectionPolicy } from '#src/routing/index.ts';
import { node, request, snapshotOf, policyContext } from '#test/fixtures/builders.ts';

const CONTEXT = policyContext(Math.random);
const fresh = (): SelectionPolicy => createPolicy('affinity', CONTEXT);
const keyed = (key: string) => request('m', { policy: 'affinity', affinityKey: key });

function live(names: readonly string[]): {
  nodes: ReturnType<typeof node>[];
  snapshot: RoutingSnapshot;
  load: Map<string, number>;
} {
  const nodes = names.map((n) => node(n));
  const load = new Map<string, number>();
  return { nodes, load, snapshot: { ...snapshotOf(nodes), inFlight: (n) => load.get(n) ?? 0 } };
}

test('the load bound is ceil((1 + epsilon) x average in flight, this request included)', () => {
  const cases: [number, number, number, number][] = [
    [0, 4, 0.25, 1],
    [3, 4, 0.25, 2],
    [11, 4, 0.25, 4],
    [99, 10, 0.25, 13],
    [5, 1, 0.25, 8],
  ];
  for (const [total, n, epsilon, bound] of cases) assert.equal(loadBound(total, n, epsilon), bound, `${total} over ${n}`);
});

test('the same key always lands on the same node while it has room', () => {
  const policy = fresh();
  const { nodes, snapshot } = live(['a', 'b', 'c', 'd']);
  const homes = new Set(Array.from({ length: 100 }, () => policy.choose(keyed('session-42'), nodes, snapshot)?.node.spec.name));
  assert.equal(homes.size, 1);
});

test('removing one of N nodes moves only the keys it held; adding one moves about 1/N', () => {
  const policy = fresh();
  const names = Array.from({ length: 8 }, (_, i) => `n${i}`);
  const homes = (list: readonly string[]): string[] => {
    const { nodes, snapshot } = live(list);
    return Array.from({ length: 2_000 }, (_, k) => policy.choose(keyed(`s${k}`), nodes, snapshot)?.node.spec.name ?? '');
  };
  const before = homes(names);
  const after = homes(names.filter((n) => n !== 'n3'));
  const moved = before.filter((home, k) => home !== after[k]);
  assert.ok(
    moved.every((home) => home === 'n3'),
    'only keys of the removed node move',
  );
  assert.ok(moved.length > 150 && moved.length < 350, `${moved.length} of 2000 moved (about 1/8 = 250)`);
  const grown = homes([...names, 'n8']);
  const movedIn = grown.filter((home, k) => home !== before[k]);
  assert.ok(
    movedIn.every((home) => home === 'n8'),
    'keys move only to the new node',
  );
  assert.ok(movedIn.length > 130 && movedIn.length < 330, `${movedIn.length} of 2000 moved to the new node (about 1/9 = 222)`);
});

test('one hot key never pushes a node past the bound: it spills to the next nodes by hash', () => {
  const policy = fresh();
  const { nodes, snapshot, load } = live(['a', 'b', 'c', 'd']);
  for (let i = 0; i < 40; i += 1) {
    const total = [...load.values()].reduce((x, y) => x + y, 0);
    const bound = loadBound(total, nodes.length, 0.25);
    const picked = policy.choose(keyed('hot'), nodes, snapshot);
    assert.ok(picked !== undefined);
    const name = picked.node.spec.name;
    load.set(name, (load.get(name) ?? 0) + 1);
    assert.ok((load.get(name) ?? 0) <= bound, `${name} holds ${load.get(name)} past the bound ${bound}`);
  }
  assert.ok(Math.max(...load.values()) <= Math.ceil((1.25 * 40) / 4));
});

test('without a key it is least-in-flight, and says so', () => {
  const { nodes, snapshot, load } = live(['a', 'b']);
  load.set('a', 2);
  const choice = fresh().choose(request('m', { policy: 'affinity' }), nodes, snapshot);
  assert.equal(choice?.node.spec.name, 'b');
  assert.equal(choice?.reason, 'no affinity key, fewest in flight');
});
