import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPolicy, pickWeighted, policyPerRequest } from '#src/routing/index.ts';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { node, request, snapshotOf, spec, policyContext } from '#test/fixtures/builders.ts';

const weighted = (name: string, weight: number) => ({ ...node(name), spec: spec(name, { weight }) });

test('weighted: a draw lands in the candidate whose share of the total weight covers it', () => {
  const nodes = [weighted('a', 1), weighted('b', 3)];
  const cases: [number, string][] = [
    [0, 'a'],
    [0.249, 'a'],
    [0.25, 'b'],
    [0.999, 'b'],
  ];
  for (const [draw, expected] of cases) assert.equal(pickWeighted(nodes, draw)?.spec.name, expected, `draw ${draw}`);
  assert.equal(pickWeighted([], 0.5), undefined);
});

test('weighted: traffic follows the weights', () => {
  const nodes = [weighted('a', 1), weighted('b', 2), weighted('c', 1)];
  const policy = createPolicy('weighted', policyContext(seededRandom(5)));
  const counts: Record<string, number> = {};
  for (let i = 0; i < 4_000; i += 1) {
    const picked = policy.choose(request('m'), nodes, snapshotOf(nodes))?.node.spec.name ?? '';
    counts[picked] = (counts[picked] ?? 0) + 1;
  }
  assert.ok(Math.abs((counts['b'] ?? 0) - 2_000) < 200, `b got ${counts['b']}`);
  assert.ok(Math.abs((counts['a'] ?? 0) - 1_000) < 150, `a got ${counts['a']}`);
});

test('round-robin: each candidate in turn, ignoring load', () => {
  const nodes = [node('a'), node('b'), node('c')];
  const policy = createPolicy('round-robin', policyContext(Math.random));
  const snapshot = snapshotOf(nodes, { a: 9 });
  const picks = Array.from({ length: 4 }, () => policy.choose(request('m'), nodes, snapshot)?.node.spec.name);
  assert.deepEqual(picks, ['a', 'b', 'c', 'a']);
});

test('least-in-flight: scores are the in-flight counts and the reason names the winner load', () => {
  const nodes = [node('a'), node('b')];
  const choice = createPolicy('least-in-flight', policyContext(Math.random)).choose(
    request('m'),
    nodes,
    snapshotOf(nodes, { a: 3, b: 1 }),
  );
  assert.equal(choice?.node.spec.name, 'b');
  assert.deepEqual(choice?.scores, [3, 1]);
  assert.equal(choice?.reason, 'fewest in flight (1, 1 tied)');
});

test('per-request dispatch: each request goes through its own policy, each keeping its own state', () => {
  const nodes = [node('a'), node('b')];
  const policy = policyPerRequest(policyContext(seededRandom(1)));
  const snapshot = snapshotOf(nodes, { a: 5 });
  // Round-robin ignores a's load; least-in-flight never picks a.
  const rr = [1, 2, 3].map(() => policy.choose(request('m', { policy: 'round-robin' }), nodes, snapshot)?.node.spec.name);
  const lif = [1, 2, 3].map(() => policy.choose(request('m', { policy: 'least-in-flight' }), nodes, snapshot)?.node.spec.name);
  assert.deepEqual(rr, ['a', 'b', 'a']);
  assert.deepEqual(lif, ['b', 'b', 'b']);
});

test('per-request dispatch: a request naming no session is the policy’s own choice, in the same rotation the session layer falls back to', () => {
  const nodes = [node('a'), node('b'), node('c')];
  const policy = policyPerRequest(policyContext(seededRandom(1)));
  const snapshot = snapshotOf(nodes);
  const plain = request('m', { policy: 'round-robin' });
  // A previous answer nobody remembers: the session layer decides nothing and hands it to the same policy.
  const forgotten = request('m', { policy: 'round-robin', previousResponseId: 'resp_unknown' });
  const picks = [plain, forgotten, plain, forgotten].map((req) => policy.choose(req, nodes, snapshot));
  assert.deepEqual(
    picks.map((choice) => choice?.node.spec.name),
    ['a', 'b', 'c', 'a'],
  );
  // With a session, the layer decides (its reason says so).
  const session = request('m', { policy: 'round-robin', sessionKey: 'x-session-id\nabc' });
  assert.match(policy.choose(session, nodes, snapshot)?.reason ?? '', /^session placed by hash/);
});
