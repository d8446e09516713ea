import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { cacheAware } from '#src/routing/index.ts';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { node, policyContext, request, snapshotOf } from '#test/fixtures/builders.ts';

function live(count: number): { nodes: ReturnType<typeof node>[]; snapshot: RoutingSnapshot; load: Map<string, number> } {
  const nodes = Array.from({ length: count }, (_, i) => node(`n${i}`));
  const load = new Map<string, number>();
  return { nodes, load, snapshot: { ...snapshotOf(nodes), inFlight: (n) => load.get(n) ?? 0 } };
}

const ask = (prompt: string) => request('m', { policy: 'cache-aware', promptPrefix: prompt });

test('20 conversations growing turn by turn keep landing where their prefix was sent', () => {
  const policy = cacheAware(policyContext());
  const { nodes, snapshot, load } = live(4);
  const random = seededRandom(4);
  const conversations = Array.from({ length: 20 }, (_, c) => `system: you are assistant ${c}. user: ${random().toString(36)}`);
  const homes = new Map<number, string>();
  let later = 0;
  let stayed = 0;
  for (let turn = 0; turn < 8; turn += 1) {
    for (let c = 0; c < conversations.length; c += 1) {
      conversations[c] += ` assistant: answer ${turn}. user: question ${random().toString(36)}`;
      const choice = policy.choose(ask(conversations[c] ?? ''), nodes, snapshot);
      const name = choice?.node.spec.name ?? '';
      // Some requests are still running while others arrive: loads move but stay in balance.
      load.set(name, (load.get(name) ?? 0) + 1);
      if (c % 2 === 1) for (const n of load.keys()) load.set(n, Math.max(0, (load.get(n) ?? 0) - 1));
      if (turn > 0) {
        later += 1;
        if (homes.get(c) === name) stayed += 1;
      }
      homes.set(c, name);
    }
  }
  assert.ok(stayed / later >= 0.9, `${stayed} of ${later} later turns stayed on their node`);
  const used = new Set(homes.values());
  assert.ok(used.size >= 3, `conversations spread over ${used.size} nodes`);
  const { matchedChars, promptChars } = policy.hits();
  assert.ok(matchedChars / promptChars > 0.6, `estimated hit rate ${matchedChars / promptChars}`);
});

test('a burst that would overload one node spills to the others', () => {
  const policy = cacheAware(policyContext());
  const { nodes, snapshot, load } = live(4);
  const prompt = 'system: one very popular prefix. user: hi';
  const first = policy.choose(ask(prompt), nodes, snapshot)?.node.spec.name ?? '';
  const counts = new Map<string, number>();
  for (let i = 0; i < 60; i += 1) {
    const choice = policy.choose(ask(`${prompt} ${i}`), nodes, snapshot);
    const name = choice?.node.spec.name ?? '';
    counts.set(name, (counts.get(name) ?? 0) + 1);
    load.set(name, (load.get(name) ?? 0) + 1);
  }
  const onHome = counts.get(first) ?? 0;
  assert.ok(onHome < 40, `the popular prefix's node took ${onHome} of 60`);
  const loads = [...load.values()];
  assert.ok(Math.max(...loads) - Math.min(...loads) <= 8 + 1, `loads ${loads.join(',')} stay within the balance bound`);
});

test('explain shows the choice without recording it', () => {
  const policy = cacheAware(policyContext());
  const { nodes, snapshot } = live(2);
  const explained = policy.explain(ask('hello world'), nodes, snapshot);
  assert.ok(explained !== undefined);
  assert.deepEqual(policy.hits(), { matchedChars: 0, promptChars: 0 });
  policy.choose(ask('hello world'), nodes, snapshot);
  const again = policy.explain(ask('hello world, more'), nodes, snapshot);
  assert.match(again?.reason ?? '', /^prefix match \d+%$/);
});
