// Issue 28, routing: with nodes that report slots (llama-server's parallel slots, a KV budget), the
// route index checked every tier node's room in the lease table on every first attempt: 10.5 µs a
// decision at 1,000 nodes and about 300 µs at 10,000. A node's requests of the model never exceed
// its requests in flight, so a count under its slots and its budget's share clears it from the
// registry's counts alone (src/routing/tier-room.ts); the lease table is read only for a node that
// this cannot clear. Checked by counting lease-table reads, and against the same decisions taken
// without the counts (a worker's mirror), not by timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightCounts } from '#src/nodes/in-flight-counts.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import { defaultFilters, leastInFlight, route, RouteIndex, type RoutingDecision } from '#src/routing/index.ts';
import { node, request, snapshotOf } from '#test/fixtures/builders.ts';

const NODES = 10_000;
const SLOTS = 4;

function fleet(): NodeView[] {
  return Array.from({ length: NODES }, (_, i) => ({
    ...node(`n${i}`, {
      models: ['m'],
      kind: 'llamacpp',
      kv: 'per-slot',
      capacity: { role: 'single', host: { nCtx: 4096, slots: SLOTS } },
    }),
    position: i,
  }));
}

/** Counts by position (journalled, as the registry's, or not, as a mirror's) and the lease table they agree with. */
function snapshotFor(
  nodes: readonly NodeView[],
  counts: InFlightCounts,
  journalled: boolean,
  reads: { usage: number },
): RoutingSnapshot {
  const base = snapshotOf(nodes);
  return {
    ...base,
    inFlight: (name) => counts.byPosition[Number(name.slice(1))] ?? 0,
    inFlightByPosition: counts.byPosition,
    ...(journalled ? { inFlightChanges: counts } : {}),
    usage: (name) => {
      reads.usage += 1;
      const requests = counts.byPosition[Number(name.slice(1))] ?? 0;
      return { requests, tokens: requests * 4096 };
    },
  };
}

const outline = (d: RoutingDecision): unknown => ({
  kind: d.kind,
  kept: d.kind === 'selected' ? d.candidates.map((n) => n.spec.name) : [],
  excluded: d.excluded.map((e) => `${e.node}:${e.code}`),
});

test(
  'a first attempt on 10,000 nodes with slots reads the lease table only for nodes its counts cannot clear',
  { timeout: 120_000 },
  () => {
    const nodes = fleet();
    const counts = new InFlightCounts(undefined);
    counts.reset(nodes.map((_, i) => i % SLOTS));
    const reads = { usage: 0 };
    const registryLike = snapshotFor(nodes, counts, true, reads);
    const mirror = snapshotFor(nodes, counts, false, { usage: 0 });
    const [index, mirrorIndex] = [new RouteIndex(), new RouteIndex()];
    const filters = defaultFilters();
    const [policy, mirrorPolicy] = [leastInFlight(), leastInFlight()];
    for (let i = 0; i < 50; i += 1) {
      reads.usage = 0;
      const decision = route(request('m'), registryLike, filters, policy, index);
      assert.ok(reads.usage <= 2, `decision ${i} read the lease table ${reads.usage} times for ${NODES} nodes with room`);
      assert.deepEqual(outline(decision), outline(route(request('m'), mirror, filters, mirrorPolicy, mirrorIndex)));
    }
    // Nodes at their slots: the same refusals as the lease table gives, read for those nodes only.
    for (const at of [7, 4_321, 9_999]) counts.set(at, SLOTS);
    reads.usage = 0;
    const decision = route(request('m'), registryLike, filters, policy, index);
    assert.ok(reads.usage <= 3 * 2, `read the lease table ${reads.usage} times for 3 full nodes`);
    const expected = route(request('m'), mirror, filters, mirrorPolicy, mirrorIndex);
    assert.deepEqual(outline(decision), outline(expected));
    assert.deepEqual(
      decision.excluded.map((e) => `${e.node}:${e.code}`),
      ['n7:no_slot', 'n4321:no_slot', 'n9999:no_slot'],
    );
  },
);
