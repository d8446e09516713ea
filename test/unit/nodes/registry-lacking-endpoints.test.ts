// A node that answered an endpoint with a route-level 404 lacks it, at that URL, until its listing
// changes (an upgraded server lists anew) or its kind or key does; the same listing again, or
// another endpoint, changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '#src/core/events.ts';
import { ManualClock } from '#src/core/clock.ts';
import { NodeRegistry, type RegistryEvents } from '#src/nodes/index.ts';
import { model, spec } from '#test/fixtures/builders.ts';

function setup(): { registry: NodeRegistry; url: string } {
  const registry = new NodeRegistry({ clock: new ManualClock(), events: new EventBus<RegistryEvents>(), failThreshold: 3 });
  registry.setNodes([spec('n', { kind: 'sglang' })]);
  registry.observeDiscovery('n', { ok: true, models: [model('m')] });
  return { registry, url: registry.view('n')?.spec.url ?? '' };
}

const lacking = (registry: NodeRegistry): unknown => registry.view('n')?.lackingEndpoints;

test('learned at the node’s URL only, once per endpoint, shown in its view', () => {
  const { registry, url } = setup();
  assert.equal(lacking(registry), undefined);
  registry.learnLackingEndpoint('n', 'http://127.0.0.1:9/elsewhere', '/v1/messages', '404');
  assert.equal(lacking(registry), undefined, 'a report from before a reload to another URL is dropped');
  registry.learnLackingEndpoint('n', url, '/v1/messages', '404 {"detail":"Not Found"}');
  const first = registry.views();
  registry.learnLackingEndpoint('n', url, '/v1/messages', 'again');
  assert.equal(registry.views(), first, 'a second report changes nothing');
  assert.deepEqual(lacking(registry), { '/v1/messages': '404 {"detail":"Not Found"}' });
  registry.learnLackingEndpoint('n', url, '/v1/messages/count_tokens', '404');
  assert.deepEqual(Object.keys(lacking(registry) as object), ['/v1/messages', '/v1/messages/count_tokens']);
});

test('the same listing keeps it; a changed listing, or a kind change, clears it', () => {
  const { registry, url } = setup();
  registry.learnLackingEndpoint('n', url, '/v1/messages', '404');
  registry.observeDiscovery('n', { ok: true, models: [model('m')] });
  assert.deepEqual(lacking(registry), { '/v1/messages': '404' }, 'the same models');
  registry.observeDiscovery('n', { ok: true, models: [model('m'), model('m2')] });
  assert.equal(lacking(registry), undefined, 'an upgraded server lists anew');
  registry.learnLackingEndpoint('n', url, '/v1/messages', '404');
  registry.setNodes([spec('n', { kind: 'vllm' })]);
  assert.equal(lacking(registry), undefined, 'another kind may serve it');
});
