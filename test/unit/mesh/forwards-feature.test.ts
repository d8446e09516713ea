// The forwards feature (src/mesh/forwards-feature.ts): on every gateway, [mesh] or not, the forwards
// sent and received are counted (gateway_mesh_forwarded_total, gateway_mesh_forwarded_in_total and
// its accepted-by-tenant series) and logged on transitions only; its stop ends both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { EventBus } from '#src/core/events.ts';
import { ForwardsFeature } from '#src/mesh/forwards-feature.ts';
import type { ForwardedIn, ForwardedOut, SiteReachability } from '#src/mesh/forwarding/forward-events.ts';

interface Events {
  out: ForwardedOut;
  in: ForwardedIn;
  reach: SiteReachability;
}

function forwards(): { feature: ForwardsFeature; bus: EventBus<Events>; lines: Record<string, unknown>[]; registry: Registry } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const bus = new EventBus<Events>();
  const feature = new ForwardsFeature({
    logger: pino({ level: 'info' }, sink),
    events: {
      forwarded: (listener) => bus.on('out', listener),
      forwardedIn: (listener) => bus.on('in', listener),
      reachability: (listener) => bus.on('reach', listener),
    },
  });
  const registry = new Registry();
  feature.metrics(registry);
  return { feature, bus, lines, registry };
}

test('forwards sent and received are counted, the accepted ones by the tenant they are admitted as', async () => {
  const { feature, bus, registry } = forwards();
  bus.emit('out', { site: 'eu', result: 'success' });
  bus.emit('in', { site: '_unknown', result: 'unknown_site' });
  bus.emit('in', { site: 'eu', result: 'accepted', admitted: { tenant: 'app', priority: 'standard', claimedClass: undefined } });
  const text = await registry.metrics();
  assert.match(text, /gateway_mesh_forwarded_total\{site="eu",result="success"\} 1\n/);
  assert.match(text, /gateway_mesh_forwarded_in_total\{site="_unknown",result="unknown_site"\} 1\n/);
  assert.match(
    text,
    /gateway_mesh_forwarded_in_tenant_total\{site="eu",tenant="app",class="standard",claimed_class="none"\} 1\n/,
  );
  feature.stop();
  bus.emit('out', { site: 'eu', result: 'success' });
  assert.match(
    await registry.metrics(),
    /gateway_mesh_forwarded_total\{site="eu",result="success"\} 1\n/,
    'stopped: no more counted',
  );
});

test('a refused forward is logged once per site and reason; a site’s reachability on each change', async () => {
  const { feature, bus, lines } = forwards();
  for (let i = 0; i < 3; i++) bus.emit('in', { site: '_unknown', result: 'unknown_site' });
  bus.emit('in', { site: 'eu', result: 'accepted' });
  bus.emit('reach', { site: 'eu', reachable: false, detail: 'connect_error' });
  bus.emit('reach', { site: 'eu', reachable: true, detail: undefined });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    lines.map((l) => l['msg']),
    [
      'forwarded request refused (logged once per site and reason)',
      'remote site unreachable; forwards skip it while it backs off',
      'remote site answering forwards again',
    ],
  );
  feature.stop();
});
