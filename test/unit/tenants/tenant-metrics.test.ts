// The tenant series are the tenants feature's (src/tenants/tenant-metrics.ts): registered by its
// `metrics`, and their request counters listen to the request plane's events only once a tenant
// is configured — a gateway without [[tenants]] pays nothing per request for them (issue 39: an
// absent feature costs nothing), and a reload that adds the first tenant starts the counting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { type GatewayConfig } from '#src/config/index.ts';
import { loadConfig } from '#src/config-tables.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { TenantsFeature } from '#src/tenants/tenants-feature.ts';

const NODES = '[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:9"\nkind = "vllm"\n';
const TENANT = '[[tenants]]\nname = "team"\nkeys = ["sk-team"]\n';

function configOf(text: string): GatewayConfig {
  const loaded = loadConfig(text, {});
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded.config;
}

function featureOn(config: GatewayConfig): {
  feature: TenantsFeature;
  events: EventBus<ProxyEvents>;
  text: () => Promise<string>;
} {
  const events = new EventBus<ProxyEvents>();
  let current = config;
  const feature = new TenantsFeature(config, {
    clock: new ManualClock(),
    logger: pino({ level: 'silent' }),
    tenants: () => current.tenants,
    queues: () => ({}),
    events: {
      finished: (listener) => events.deferred('proxy:request-finished', listener),
      limited: (listener) => events.on('proxy:tenant-limited', listener),
    },
  });
  const registry = new Registry();
  feature.metrics(registry);
  const reload = feature.reload.bind(feature);
  feature.reload = (previous, next) => {
    current = next;
    reload(previous, next);
  };
  return {
    feature,
    events,
    text: () => {
      events.flush();
      return registry.metrics();
    },
  };
}

const finished = (tenant: string): ProxyEvents['proxy:request-finished'] => ({
  endpoint: '/v1/chat/completions',
  model: 'm',
  node: 'a',
  status: 200,
  durationMs: 1,
  firstByteMs: undefined,
  brokenError: undefined,
  clientAborted: false,
  tenant,
  usage: { promptTokens: 3, completionTokens: 4, counted: 'usage' },
});

test('without tenants the series are registered and no request is counted (no listener on the request plane)', async () => {
  const { feature, events, text } = featureOn(configOf(NODES));
  events.emit('proxy:request-finished', finished('default'));
  const shown = await text();
  assert.match(shown, /# TYPE gateway_tenant_requests_total counter/);
  assert.doesNotMatch(shown, /gateway_tenant_requests_total\{/);
  assert.doesNotMatch(shown, /gateway_tenant_prompt_tokens_total\{/);
  await feature.stop();
});

test('with a tenant configured each finished request is counted by tenant, model and outcome', async () => {
  const { feature, events, text } = featureOn(configOf(NODES + TENANT));
  events.emit('proxy:request-finished', finished('team'));
  events.emit('proxy:tenant-limited', { tenant: 'team', reason: 'requests' });
  const shown = await text();
  assert.match(shown, /gateway_tenant_requests_total\{tenant="team",model="m",outcome="ok"\} 1/);
  assert.match(shown, /gateway_tenant_prompt_tokens_total\{tenant="team",model="m",node="a"\} 3/);
  assert.match(shown, /gateway_tenant_limited_total\{tenant="team",reason="requests"\} 1/);
  await feature.stop();
});

test('a reload that adds the first tenant starts the counting; one that removes it keeps it', async () => {
  const none = configOf(NODES);
  const one = configOf(NODES + TENANT);
  const { feature, events, text } = featureOn(none);
  events.emit('proxy:request-finished', finished('default'));
  feature.reload(none, one);
  events.emit('proxy:request-finished', finished('team'));
  feature.reload(one, none);
  events.emit('proxy:request-finished', finished('team'));
  const shown = await text();
  assert.doesNotMatch(shown, /tenant="default"/);
  assert.match(shown, /gateway_tenant_requests_total\{tenant="team",model="m",outcome="ok"\} 2/);
  await feature.stop();
});
