// The feature list (src/gateway/features.ts): the features a config enables, in the order they
// start, and what they add to the owner's parts — an absent feature adds nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import { NO_REPORTS } from '#src/core/request-fields.ts';
import { loadConfig } from '#src/config-tables.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import {
  featureModules,
  featuresFor,
  inThreadFeaturePorts,
  ownerSides,
  type FeatureHost,
  type FeatureModules,
  type FeatureOptions,
  type FeatureParts,
  type GatewayFeature,
} from '#src/gateway/features.ts';
import { partIn } from '#src/core/part-key.ts';
import { SITES_PORT } from '#src/mesh/forwarding/index.ts';
import { WORKER_SIDES } from '#src/plane/index.ts';
import { TENANT_ADMISSION } from '#src/tenants/index.ts';

const NODES = '[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:9"\n';
const MESH =
  '[mesh]\nsite = "paris"\nurl = "http://10.0.0.1:8080/"\nkey_file = "/nonexistent/site.key"\nlisten = ["/ip4/127.0.0.1/tcp/0"]\n';
const CLUSTER = '[cluster]\nstore = "redis://127.0.0.1:9/0"\n';
const TRACING = '[tracing]\notlp_endpoint = "http://127.0.0.1:9/v1/traces"\n';

function config(toml: string): GatewayConfig {
  const loaded = loadConfig(`${NODES}${toml}`, {});
  assert.ok(loaded.ok, JSON.stringify(loaded));
  return loaded.config;
}

function host(current: GatewayConfig): FeatureHost {
  return {
    clock: new ManualClock(1_700_000_000_000),
    logger: pino({ level: 'silent' }),
    config: () => current,
    registry: { views: () => [], inFlight: () => 0, freshViews: () => [], snapshot: () => assert.fail('no snapshot here') },
    registryEvents: new EventBus<RegistryEvents>(() => undefined),
    proxyEvents: new EventBus<ProxyEvents>(() => undefined),
    scheduler: () => assert.fail('the scheduler is not read while the list is built'),
    refresh: () => Promise.resolve(),
    planeFigures: () => [],
    reports: () => NO_REPORTS,
  };
}

/** Builds the list for `toml`, hands it to `check`, and stops what it built (no file is written: no replay record). */
async function withFeatures(
  toml: string,
  check: (features: readonly GatewayFeature[], modules: FeatureModules) => void,
): Promise<void> {
  const current = config(toml);
  const options: FeatureOptions = { meshGossip: { replayFile: false, stateFile: false } };
  const modules = await featureModules(current, options);
  const features = featuresFor(current, options, host(current), modules);
  try {
    check(features, modules);
  } finally {
    await Promise.all(features.map((feature) => feature.stop()));
  }
}

const partNames = (features: readonly GatewayFeature[]): string[] =>
  [...new Set(features.flatMap((feature) => Object.keys(feature.parts ?? {})))].sort();

test('a config with no optional section: tenants, model management and the request log, nothing of mesh, cluster or tracing', async () => {
  await withFeatures('', (features) => {
    assert.deepEqual(
      features.map((f) => f.name),
      ['tenants', 'models', 'request-log', 'translation', 'forwards'],
    );
    const absent: (keyof FeatureParts)[] = [
      'sites',
      'workersMesh',
      'wrapAdmission',
      'admitTenant',
      'wakeSender',
      'tracer',
      'dashboardSites',
    ];
    for (const name of absent) assert.equal(partNames(features).includes(name), false, name);
  });
});

test('[tracing], [mesh] and [cluster] each add their feature, in the order they start (the mesh before the cluster)', async () => {
  await withFeatures(`${TRACING}${MESH}${CLUSTER}`, (features) => {
    assert.deepEqual(
      features.map((f) => f.name),
      ['tenants', 'models', 'request-log', 'translation', 'forwards', 'tracing', 'mesh', 'cluster'],
    );
    const parts = partNames(features);
    for (const name of ['sites', 'workersMesh', 'wrapAdmission', 'admitTenant', 'wakeSender', 'tracer', 'dashboardSites'])
      assert.ok(parts.includes(name), name);
    // No part name is given twice: [cluster]'s site-wide tenants report over the tenants' own is an
    // admin view of the same path (adminViews; the last test), the one place a later feature's wins.
    const given = features.flatMap((feature) => Object.keys(feature.parts ?? {}));
    assert.deepEqual(
      given.filter((name, i) => given.indexOf(name) !== i),
      [],
    );
    const views = features.flatMap((feature) => Object.keys(feature.adminViews?.() ?? {}));
    assert.deepEqual(
      views.filter((path, i) => views.indexOf(path) !== i),
      ['/admin/tenants'],
    );
  });
});

test('each optional section alone adds its feature alone', async () => {
  for (const [toml, name] of [
    [TRACING, 'tracing'],
    [MESH, 'mesh'],
    [CLUSTER, 'cluster'],
  ] as const) {
    await withFeatures(toml, (features) => {
      assert.deepEqual(
        features.map((f) => f.name),
        ['tenants', 'models', 'request-log', 'translation', 'forwards', name],
      );
    });
  }
});

test('with [cluster], its site-wide tenants report replaces the tenants’ own (a later feature’s view wins)', async () => {
  await withFeatures(CLUSTER, (features) => {
    // As the owner composes the admin views (gateway/parts.ts): one object, later features over earlier ones.
    const views = features.map((f) => f.adminViews?.());
    const merged = Object.assign({}, ...views) as Record<string, unknown>;
    const cluster = views[features.findIndex((f) => f.name === 'cluster')];
    const tenants = views[features.findIndex((f) => f.name === 'tenants')];
    assert.ok(tenants?.['/admin/tenants'] !== undefined);
    assert.equal(merged['/admin/tenants'], cluster?.['/admin/tenants']);
  });
});

test('with [mesh], /admin/sites is the mesh’s admin view (mesh false until it runs); without it, no feature gives that path', async () => {
  await withFeatures(MESH, (features) => {
    const views = Object.assign({}, ...features.map((f) => f.adminViews?.())) as Record<string, () => unknown>;
    const givers = features.filter((f) => f.adminViews?.()['/admin/sites'] !== undefined).map((f) => f.name);
    assert.deepEqual(givers, ['mesh']);
    assert.deepEqual(views['/admin/sites']?.(), { mesh: false, sites: [] });
  });
  await withFeatures('', (features) => {
    const paths = features.flatMap((f) => Object.keys(f.adminViews?.() ?? {}));
    assert.equal(paths.includes('/admin/sites'), false);
  });
});

test('the features’ ports and their crossings to request workers: the tenants’ always, the mesh’s with [mesh], each side listed for the workers', async () => {
  for (const [toml, crossings] of [
    ['', ['tenants']],
    [MESH, ['tenants', 'mesh']],
  ] as const) {
    await withFeatures(toml, (features, modules) => {
      // As the owner merges the parts (gateway/parts.ts).
      const parts = Object.assign({}, ...features.map((f) => f.parts ?? {})) as Partial<FeatureParts>;
      const ports = inThreadFeaturePorts(parts);
      assert.ok(partIn(ports, TENANT_ADMISSION) !== undefined, 'the tenants’ admission port');
      assert.equal(partIn(ports, SITES_PORT) !== undefined, toml === MESH, 'the sites port with [mesh] alone');
      const names = ownerSides(parts, modules).map((side) => side.name);
      assert.deepEqual(names, crossings);
      for (const name of names) assert.ok(name in WORKER_SIDES, `a worker side is listed for ${name}`);
    });
  }
});
