// Issue 42, idle memory (and issue 39: an absent feature costs nothing, at start-up too): a `serve`
// with one node and none of [mesh], [cluster], [tracing] or [server] state_dir loaded those
// features' runtimes all the same (the feature list imported every feature's class: 37 modules of
// mesh/, cluster's, tracing's and the Files and Batch API's; the request plane the sites' request
// half, the forwarding barrel and http-message-signatures, 35 more), and prom-client's default metrics
// loaded @opentelemetry/api (51 modules) for exemplars the gateway never enables. The feature list
// now loads a feature's module only when the config enables it (gateway/features.ts,
// `featureModules`; the request plane's sites half with the sites port, plane/request-features.ts),
// and prom-client's one require of the API is loaded on first use
// (bin/otel-api-on-first-use.js). Checked by what a spawned gateway loads (an import trace), not
// by its RSS; and, the other way, that a configured feature is loaded and served.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadedByServe } from '#test/fixtures/loaded-modules.ts';

/** The runtimes of the optional features, and the API prom-client asks for: what a config without them must not load. */
const ABSENT: readonly { readonly what: string; readonly is: RegExp }[] = [
  { what: '[mesh]', is: /\/src\/mesh\/(mesh-feature|crossing\/owner-mesh|mesh-service)\.ts$/ },
  {
    what: '[mesh]: the sites’ request half and the forwards’ signatures',
    is: /\/src\/proxy\/sites\/(sites-feature|site-target|forward-in)\.ts$|\/src\/mesh\/forwarding\/(index|forward-signature|verify-forward)\.ts$|\/node_modules\/http-message-signatures\//,
  },
  { what: '[cluster]', is: /\/src\/cluster\/(?!cluster-table\.ts|cluster-config\.ts)[^/]+\.ts$/ },
  { what: '[tracing]', is: /\/src\/tracing\/tracing-feature\.ts$/ },
  { what: '[server] state_dir (the Files and Batch API)', is: /\/src\/batch\/(batch-feature|batch-service|batch-db)\.ts$/ },
  { what: '@opentelemetry/api', is: /\/node_modules\/@opentelemetry\/api\// },
];

const loadedOf = (urls: readonly string[], is: RegExp): string[] => urls.filter((u) => is.test(u));

test(
  'serve with one node and no optional section loads no optional feature’s runtime, and not @opentelemetry/api',
  { timeout: 150_000 },
  async () => {
    const { urls, code } = await loadedByServe();
    assert.equal(code, 0);
    assert.ok(
      urls.some((u) => u.endsWith('/src/gateway/features.ts')),
      'the feature list loaded',
    );
    assert.ok(
      urls.some((u) => u.includes('/node_modules/prom-client/lib/metrics/processCpuTotal.js')),
      'prom-client’s default metrics loaded',
    );
    const loaded = Object.fromEntries(ABSENT.map(({ what, is }) => [what, loadedOf(urls, is)]));
    assert.deepEqual(loaded, Object.fromEntries(ABSENT.map(({ what }) => [what, []])));
  },
);

test('a configured feature is loaded: [tracing] and [server] state_dir', { timeout: 150_000 }, async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'switchyard-0042-02-'));
  try {
    const { urls, code } = await loadedByServe({
      toml: '[tracing]\notlp_endpoint = "http://127.0.0.1:1/v1/traces"\n',
      serverExtra: `state_dir = ${JSON.stringify(stateDir)}`,
    });
    assert.equal(code, 0);
    assert.equal(loadedOf(urls, /\/src\/tracing\/tracing-feature\.ts$/).length, 1, 'the tracing feature');
    assert.equal(loadedOf(urls, /\/src\/batch\/batch-feature\.ts$/).length, 1, 'the Files and Batch API');
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
});
