// The one contract every selection policy passes: run for every name in the registry, so a new
// policy is covered the moment it is registered.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { POLICY_NAMES } from '#src/config/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import {
  createPolicy,
  defaultFilters,
  POLICIES,
  REQUEST_FEATURES,
  requestFeaturesFor,
  route,
  type RequestFeature,
  type RequestFeatures,
  type SelectionPolicy,
} from '#src/routing/index.ts';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { InFlightCounts } from '#src/nodes/in-flight-counts.ts';
import { node, request, snapshotOf, policyContext } from '#test/fixtures/builders.ts';

const fresh = (name: (typeof POLICY_NAMES)[number], seed = 7): SelectionPolicy =>
  createPolicy(name, policyContext(seededRandom(seed)));

/** A snapshot whose in-flight counts the test raises as it routes, and which counts its own reads. */
function liveSnapshot(nodes: readonly NodeView[]): { snapshot: RoutingSnapshot; load: Map<string, number>; reads: () => number } {
  const load = new Map<string, number>();
  let reads = 0;
  const base = snapshotOf(nodes);
  const snapshot: RoutingSnapshot = {
    ...base,
    inFlight: (name) => {
      reads += 1;
      return load.get(name) ?? 0;
    },
    usage: (name, model) => {
      reads += 1;
      return base.usage(name, model);
    },
  };
  return { snapshot, load, reads: () => reads };
}

/**
 * As the registry's snapshot: positioned views, counts by position with their journal of changes
 * (a policy may keep a candidates array ordered by load and catch up from it).
 */
function journalledSnapshot(count: number): { nodes: NodeView[]; snapshot: RoutingSnapshot; counts: InFlightCounts } {
  const nodes = Array.from({ length: count }, (_, i) => ({ ...node(`n${i}`, { models: ['m'] }), position: i }));
  const counts = new InFlightCounts(undefined);
  counts.reset(nodes.map(() => 0));
  const base = snapshotOf(nodes);
  const snapshot: RoutingSnapshot = {
    ...base,
    inFlight: (name) => counts.byPosition[Number(name.slice(1))] ?? 0,
    inFlightByPosition: counts.byPosition,
    inFlightChanges: counts,
  };
  return { nodes, snapshot, counts };
}

test('the registry holds exactly the policies the config accepts', () => {
  assert.deepEqual(Object.keys(POLICIES).sort(), [...POLICY_NAMES].sort());
});

for (const name of POLICY_NAMES) {
  describe(`selection policy contract: ${name}`, () => {
    test('has its registered name, and picks nothing from no candidates', () => {
      const policy = fresh(name);
      assert.equal(policy.name, name);
      assert.equal(policy.choose(request('m', { policy: name }), [], snapshotOf([])), undefined);
    });

    test('never picks a node outside the candidates, and route never picks an excluded one', () => {
      const policy = fresh(name);
      const nodes = Array.from({ length: 8 }, (_, i) =>
        node(`n${i}`, { health: i % 3 === 0 ? 'dead' : 'healthy', models: i % 4 === 1 ? ['other'] : ['m'] }),
      );
      const { snapshot, load } = liveSnapshot(nodes);
      const draw = seededRandom(3);
      for (let i = 0; i < 200; i += 1) {
        const subset = nodes.filter(() => draw() < 0.5);
        const choice = policy.choose(request('m', { policy: name }), subset, snapshot);
        if (subset.length === 0) assert.equal(choice, undefined);
        else assert.ok(choice !== undefined && subset.includes(choice.node), 'picked a node that was not a candidate');
        if (choice !== undefined) load.set(choice.node.spec.name, (load.get(choice.node.spec.name) ?? 0) + 1);
        const decision = route(request('m', { policy: name }), snapshot, defaultFilters(), policy);
        assert.equal(decision.kind, 'selected');
        if (decision.kind === 'selected')
          assert.ok(!decision.excluded.some((e) => e.node === decision.node.spec.name), 'picked an excluded node');
      }
    });

    test('is deterministic with the same injected random source', () => {
      const nodes = Array.from({ length: 5 }, (_, i) => node(`n${i}`, { models: ['m'] }));
      const picks = (policy: SelectionPolicy): string[] => {
        const { snapshot, load } = liveSnapshot(nodes);
        return Array.from({ length: 100 }, (_, i) => {
          const choice = policy.choose(request('m', { policy: name, affinityKey: `k${i % 7}` }), nodes, snapshot);
          const picked = choice?.node.spec.name ?? '';
          if (i % 3 !== 0) load.set(picked, (load.get(picked) ?? 0) + 1);
          return picked;
        });
      };
      assert.deepEqual(picks(fresh(name, 11)), picks(fresh(name, 11)));
    });

    test('spreads load evenly among equal nodes', () => {
      const policy = fresh(name);
      const nodes = Array.from({ length: 4 }, (_, i) => node(`n${i}`, { models: ['m'] }));
      const { snapshot, load } = liveSnapshot(nodes);
      const counts = new Map<string, number>();
      const running: string[] = [];
      for (let i = 0; i < 800; i += 1) {
        // Distinct keys, so key-based policies spread by their hashing rather than a fallback.
        const picked =
          policy.choose(request('m', { policy: name, affinityKey: `session-${i}` }), nodes, snapshot)?.node.spec.name ?? '';
        counts.set(picked, (counts.get(picked) ?? 0) + 1);
        load.set(picked, (load.get(picked) ?? 0) + 1);
        running.push(picked);
        // Every other request the oldest one finishes, so load-aware policies see loads fall too.
        const done = i % 2 === 1 ? running.shift() : undefined;
        if (done !== undefined) load.set(done, (load.get(done) ?? 1) - 1);
      }
      for (const n of nodes) {
        const share = counts.get(n.spec.name) ?? 0;
        assert.ok(share >= 140 && share <= 260, `${n.spec.name} got ${share} of 800 (expected about 200)`);
      }
    });

    test('over the registry-like journalled snapshot, the same candidates array each time: stays within them, spreads load, scores every candidate', () => {
      const policy = fresh(name);
      const { nodes, snapshot, counts } = journalledSnapshot(6);
      const candidates = nodes.slice(1, 5);
      const got = new Map<string, number>();
      const running: number[] = [];
      for (let i = 0; i < 800; i += 1) {
        const choice = policy.choose(request('m', { policy: name, affinityKey: `session-${i}` }), candidates, snapshot);
        assert.ok(choice !== undefined && candidates.includes(choice.node), 'picked a node that was not a candidate');
        assert.equal(choice.scores.length, candidates.length, 'one score per candidate');
        if (choice.scoreAt !== undefined)
          assert.deepEqual(
            candidates.map((_, k) => choice.scoreAt?.(k)),
            [...choice.scores],
          );
        const at = choice.node.position ?? -1;
        got.set(choice.node.spec.name, (got.get(choice.node.spec.name) ?? 0) + 1);
        counts.set(at, (counts.byPosition[at] ?? 0) + 1);
        running.push(at);
        const done = i % 2 === 1 ? running.shift() : undefined;
        if (done !== undefined) counts.set(done, (counts.byPosition[done] ?? 1) - 1);
      }
      for (const n of candidates) {
        const share = got.get(n.spec.name) ?? 0;
        assert.ok(share >= 140 && share <= 260, `${n.spec.name} got ${share} of 800 (expected about 200)`);
      }
    });

    test('does O(candidates) work: a bounded number of snapshot reads per candidate', () => {
      const policy = fresh(name);
      const nodes = Array.from({ length: 1_000 }, (_, i) => node(`n${i}`, { models: ['m'] }));
      const { snapshot, reads } = liveSnapshot(nodes);
      const choice = policy.choose(request('m', { policy: name, affinityKey: 'one-session' }), nodes, snapshot);
      assert.ok(choice !== undefined);
      assert.ok(reads() <= 4 * nodes.length + 4, `${reads()} snapshot reads for ${nodes.length} candidates`);
      assert.equal(choice.scores.length, nodes.length, 'one score per candidate');
    });

    test('declares the request features it reads, as its registry entry does', () => {
      const reads = fresh(name).reads;
      assert.deepEqual(reads, POLICIES[name].reads);
      for (const feature of reads) assert.ok((REQUEST_FEATURES as readonly string[]).includes(feature), feature);
    });

    test('reads no request feature it does not declare', () => {
      const nodes = Array.from({ length: 5 }, (_, i) => node(`n${i}`, { models: ['m'] }));
      const declared = (i: number): RequestFeatures => ({
        affinityKey: `k${i % 7}`,
        promptPrefix: `prompt ${i % 3} of the same opening`,
        sessionKey: `x-session-affinity\nsession ${i % 5}`,
        previousResponseId: `resp_${i % 4}`,
      });
      const picks = (features: (i: number) => RequestFeatures): string[] => {
        const policy = fresh(name, 5);
        const { snapshot, load } = liveSnapshot(nodes);
        return Array.from({ length: 120 }, (_, i) => {
          const picked = policy.choose(request('m', { policy: name, ...features(i) }), nodes, snapshot)?.node.spec.name ?? '';
          if (i % 3 !== 0) load.set(picked, (load.get(picked) ?? 0) + 1);
          return picked;
        });
      };
      const only = (i: number): RequestFeatures => {
        const all = declared(i);
        return Object.fromEntries(POLICIES[name].reads.map((f) => [f, all[f]]));
      };
      for (const feature of REQUEST_FEATURES.filter((f) => !POLICIES[name].reads.includes(f))) {
        const withFeature = (i: number): RequestFeatures => ({ ...only(i), [feature]: `other ${i % 4} value` });
        assert.deepEqual(
          picks(withFeature),
          picks(only),
          `${name} picks differently when ${feature}, which it does not declare, is set`,
        );
      }
    });

    test('the request path reads exactly the features it declares, each once', () => {
      const calls: RequestFeature[] = [];
      const reader = (feature: RequestFeature) => (): string => {
        calls.push(feature);
        return `${feature}-value`;
      };
      const features = requestFeaturesFor(name, {
        affinityKey: reader('affinityKey'),
        promptPrefix: reader('promptPrefix'),
        sessionKey: reader('sessionKey'),
        previousResponseId: reader('previousResponseId'),
      });
      assert.deepEqual([...calls].sort(), [...POLICIES[name].reads].sort());
      assert.deepEqual(Object.keys(features).sort(), [...POLICIES[name].reads].sort());
      for (const feature of POLICIES[name].reads) assert.equal(features[feature], `${feature}-value`);
    });

    test('explains its pick with a reason that fits in a response header', () => {
      const nodes = [node('a', { models: ['m'] }), node('b', { models: ['m'] })];
      const choice = fresh(name).choose(request('m', { policy: name }), nodes, snapshotOf(nodes));
      assert.ok(choice !== undefined);
      assert.match(choice.reason, /^[\x20-\x3a\x3c-\x7e]{1,200}$/, 'printable ASCII, no ";"');
    });
  });
}
