// The one place that names the request plane's features (src/plane/request-features.ts): a config
// that enables none gets none, and the handler's hooks are the empty ones (an absent feature
// contributes nothing); each section adds exactly its own contributions. Translation is on by
// default (`[routing] translate`): the configs that enable nothing turn it off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type GatewayConfig } from '#src/config/index.ts';
import { loadConfig } from '#src/config-tables.ts';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { RequestTracer } from '#src/core/tracing.ts';
import { featureSetOf, requestFeaturesFor, requestHooksOf } from '#src/plane/request-features.ts';
import type { RequestPorts } from '#src/ports/index.ts';
import { NO_HOOKS, type ProxyEvents, type RequestFeature } from '#src/proxy/index.ts';
import { partsOf } from '#src/core/part-key.ts';
import { TENANT_ADMISSION } from '#src/tenants/index.ts';

const BASE = '[server]\nlisten = "127.0.0.1:0"\n[[nodes]]\nname = "n"\nurl = "http://127.0.0.1:1"\nkind = "vllm"\n';
const NO_TRANSLATION = '[routing]\ntranslate = false\nresumable_streams = false\n';

function configOf(extra: string, serverExtra = '', routing = NO_TRANSLATION): GatewayConfig {
  const loaded = loadConfig(BASE.replace('[server]\n', `[server]\n${serverExtra}\n`) + routing + extra, {
    KEY: 'sk-test-key-0123456789',
  });
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  return loaded.config;
}

const refusing = (what: string): object => new Proxy({}, { get: () => assert.fail(`asked ${what}`) });
/** The features' ports: the tenants' admission alone (no [mesh]), never asked while the features are built. */
const FEATURE_PORTS = partsOf(TENANT_ADMISSION, refusing('the tenant admission'));
/** Ports no test request reaches: building the features must ask none of them anything. */
const PORTS = new Proxy({} as RequestPorts, {
  get: (_target, name) => (name === 'features' ? FEATURE_PORTS : refusing(String(name))),
});

/**
 * Every plane serves the Files and Batch API's routes (issue 44: without [server] state_dir they
 * answer what to set); no request hook comes with them. The tests below look at the other features.
 */
const beside = (features: readonly RequestFeature[]): readonly RequestFeature[] => {
  const routesOnly = features.filter((f) => Object.keys(f).join() === 'routes');
  assert.equal(routesOnly.length, 1, 'the batch routes, once');
  return features.filter((f) => !routesOnly.includes(f));
};

function hostFor(config: GatewayConfig, tracer?: RequestTracer) {
  return {
    config: () => config,
    clock: new ManualClock(0),
    events: new EventBus<ProxyEvents>(() => {}),
    tracer,
    remote: undefined,
  };
}

test('a config with no client keys, no [mesh] and no [tracing] gets no feature and the empty hooks', () => {
  const config = configOf('');
  const all = requestFeaturesFor(config, PORTS, hostFor(config));
  const features = beside(all);
  assert.deepEqual(features, []);
  assert.equal(requestHooksOf(all), NO_HOOKS, 'the batch routes add no per-request hook');
  assert.equal(featureSetOf(config), '');
});

test('translation, on by default, adds only its translations, by client endpoint: /v1/messages, /v1/responses and no other', () => {
  const config = configOf('', '', '[routing]\nresumable_streams = false\n');
  const features = beside(requestFeaturesFor(config, PORTS, hostFor(config)));
  assert.deepEqual(
    features.map((f) => Object.keys(f)),
    [['translations']],
  );
  const hooks = requestHooksOf(features);
  assert.equal(hooks.started, undefined);
  assert.deepEqual(hooks.sources, []);
  assert.deepEqual(Object.keys(hooks.translations), ['/v1/messages', '/v1/responses']);
  assert.equal(hooks.translations['/v1/chat/completions'], undefined);
  assert.equal(featureSetOf(config), '+translate');
});

test('client keys ([server] api_keys, the default tenant) add the client check and nothing else', () => {
  const config = configOf('', 'api_keys = ["env:KEY"]');
  const features = beside(requestFeaturesFor(config, PORTS, hostFor(config)));
  assert.equal(features.length, 1);
  assert.deepEqual(Object.keys(features[0] ?? {}), ['clients']);
  assert.equal(requestHooksOf(features), NO_HOOKS, 'no per-request hook: the gates come with the caller');
  assert.equal(featureSetOf(config), 'tenants');
});

test('[tracing] adds only the start hook, which opens the request span', () => {
  const config = configOf('');
  const opened: string[] = [];
  const tracer = {
    request: (start: { requestId: string }) => {
      opened.push(start.requestId);
      return undefined;
    },
  } as unknown as RequestTracer;
  const features = beside(requestFeaturesFor(config, PORTS, hostFor(config, tracer)));
  assert.deepEqual(
    features.map((f) => Object.keys(f)),
    [['started']],
  );
  const hooks = requestHooksOf(features);
  assert.deepEqual(hooks.sources, []);
  const report = { requestId: 'r-1', trace: undefined };
  hooks.started?.({
    endpoint: '/v1/chat/completions',
    req: { method: 'POST', headers: {} },
    caller: { labels: {} },
    report,
  } as never);
  assert.deepEqual(opened, ['r-1']);
});

test('resumable streams, on by default ([routing] resumable_streams), add the X-Conversation-Id mark and their three routes', () => {
  const config = configOf('', '', '[routing]\ntranslate = false\n');
  const features = beside(requestFeaturesFor(config, PORTS, hostFor(config)));
  assert.deepEqual(
    features.map((f) => Object.keys(f)),
    [['marks', 'routes']],
  );
  const hooks = requestHooksOf(features);
  assert.equal(hooks.started, undefined);
  assert.deepEqual(hooks.sources, []);
  assert.deepEqual(
    hooks.marks?.map((m) => m.header),
    ['x-conversation-id'],
  );
  const routes = features[0]?.routes?.({
    node: () => undefined,
    pools: refusing('the pools') as never,
    answerOwner: undefined,
    newRequestId: () => 'r',
    serve: refusing('the spine') as never,
  });
  assert.deepEqual(
    routes?.map((r) => `${r.method} ${r.path}`),
    ['GET /v1/stream', 'DELETE /v1/stream', 'POST /v1/streams/lookup'],
  );
  assert.equal(featureSetOf(config), '+streams');
});
