// Issue 28, routing: least-in-flight read every candidate's live in-flight count on every request
// (114 µs a decision at 10,000 nodes × 50 models), and issue 28 kept the candidates ordered by load
// from a journal of count changes so that a decision read a handful. Issue 39 retired that
// structure (10,000-node fleets are not a target: docs/design.md, "Three product questions"): a
// decision scans every count again (~10 µs at 1,000 nodes, ~100 at 10,000). What still matters,
// checked here at 10,000 nodes with a lease taken per pick and the oldest of 32 returned: every
// decision picks a least-loaded node, the same one the pure reference (pickLeastInFlight, with the
// same turn) picks from the registry's counts by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { NodeRegistry, type Lease, type RegistryEvents } from '#src/nodes/index.ts';
import { defaultFilters, leastInFlight, pickLeastInFlight, route, RouteIndex } from '#src/routing/index.ts';
import { model, request, spec } from '#test/fixtures/builders.ts';

const NODES = 10_000;

test('least-in-flight at 10,000 nodes picks a least-loaded node, as the pure reference does', { timeout: 120_000 }, () => {
  const bus = new EventBus<RegistryEvents>((error) => {
    throw error;
  });
  const registry = new NodeRegistry({ clock: new ManualClock(), events: bus, failThreshold: 3 });
  const specs = Array.from({ length: NODES }, (_, i) => spec(`n${i}`));
  registry.setNodes(specs);
  for (const s of specs) registry.observeDiscovery(s.name, { ok: true, models: [model('m'), model(`own-${s.name}`)] });

  const policy = leastInFlight();
  const filters = defaultFilters();
  const index = new RouteIndex();
  const outstanding: Lease[] = [];
  for (let turn = 0; turn < 400; turn += 1) {
    const snapshot = registry.snapshot();
    // The reference over every node (each serves m), by name, before the decision.
    const expected = pickLeastInFlight(snapshot.nodes, (name) => registry.inFlight(name), turn);
    const decision = route(request('m'), snapshot, filters, policy, index);
    assert.equal(decision.kind, 'selected');
    if (decision.kind !== 'selected') return;
    const least = Math.min(...specs.map((s) => registry.inFlight(s.name)));
    assert.equal(
      registry.inFlight(decision.node.spec.name),
      least,
      `decision ${turn} picked a node with more in flight than the least loaded`,
    );
    assert.equal(decision.node.spec.name, expected?.spec.name, `decision ${turn} is not the reference's pick`);
    const lease = registry.claim(decision.node.spec.name, 'm', 1);
    assert.ok(lease !== undefined);
    outstanding.push(lease);
    if (outstanding.length > 32) outstanding.shift()?.release();
  }
});
