// /admin/explain's session part: where the key was read, a hash of it (never the value), the node
// its last turn went to, and whether this turn is kept there, moved off it or placed by hash.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainRouting, explainSession } from '#src/admin/explain.ts';
import { defaultFilters, policyPerRequest, sessionFeature } from '#src/routing/index.ts';
import { node, request, snapshotOf, policyContext } from '#test/fixtures/builders.ts';

const SECRET = 'c0ffee-session-value';
const keyed = request('m', { sessionKey: sessionFeature({ source: 'x-claude-code-session-id', value: SECRET }) });

test('the session part: source, a hash of the key, the remembered node, the verdict', () => {
  assert.equal(explainSession(request('m'), undefined, 'a'), undefined, 'a plain request has none');
  const placed = explainSession(keyed, undefined, 'a');
  assert.equal(placed?.source, 'x-claude-code-session-id');
  assert.match(placed?.key_hash ?? '', /^[0-9a-f]{14}$/);
  assert.equal(placed?.verdict, 'placed');
  assert.equal(placed?.node, null);
  assert.equal(explainSession(keyed, 'a', 'a')?.verdict, 'kept');
  assert.equal(explainSession(keyed, 'a', 'b')?.verdict, 'moved');
  const otherTenant = explainSession({ ...keyed, tenant: { name: 't', priority: 'standard', weight: 1 } }, undefined, 'a');
  assert.notEqual(otherTenant?.key_hash, placed?.key_hash, 'per tenant');
});

test('explain reads the remembered node without recording a turn, and never shows the value', () => {
  const nodes = [node('a'), node('b'), node('c')];
  const snapshot = snapshotOf(nodes);
  const policies = policyPerRequest(policyContext(() => 0.5));
  const first = explainRouting(keyed, snapshot, defaultFilters(), policies);
  assert.equal(first.session?.verdict, 'placed');
  assert.equal(first.session?.node, null, 'explain placed nothing');
  const routed = policies.choose(keyed, nodes, snapshot);
  const again = explainRouting(keyed, snapshot, defaultFilters(), policies);
  assert.equal(again.session?.node, routed?.node.spec.name);
  assert.equal(again.session?.verdict, 'kept');
  assert.match(again.choice?.reason ?? '', /^session kept on its node/);
  assert.ok(!JSON.stringify(again).includes(SECRET));
});
