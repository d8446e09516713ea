// A request worker's mesh link: built only with [mesh], its key from the PEM the owner sends (none
// before: nothing is forwarded), its pins and skew read from the config in force (a reload's
// config applies), its sites from the mirror; the wire form of the site views loses nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#src/core/clock.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import { keyPemOf, WorkerMesh } from '#src/mesh/crossing/worker-mesh.ts';
import { sitesFromWire, sitesSignature, sitesToWire } from '#src/mesh/crossing/index.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import { signForward, verifyForward } from '#src/mesh/forwarding/index.ts';

const own = newSiteKey();
const other = testSiteKey();
const upstream = { maxConnections: 4, connectionWaitMs: 1_000 } as unknown as GatewayConfig['upstream'];
const meshOf = (pins: [string, string][], skewMs: number): MeshConfig =>
  ({ site: 'a', maxClockSkewMs: skewMs, sites: pins.map(([id, publicKey]) => ({ id, publicKey })) }) as unknown as MeshConfig;

function deps(config: () => GatewayConfig) {
  return { config, clock: new ManualClock(), send: () => {} };
}

const C: RemoteSiteView = {
  id: 'c',
  url: 'http://127.0.0.1:2',
  fresh: true,
  load: 1.25,
  models: new Map([
    ['m', { ctx: undefined, onDemand: true }],
    ['n', { ctx: 4096, onDemand: false }],
  ]),
};

test('no [mesh] in the config: no mesh link in the worker', () => {
  assert.equal(
    WorkerMesh.start(
      { keyPem: undefined, sites: [] },
      deps(() => ({ upstream }) as unknown as GatewayConfig),
    ),
    undefined,
  );
});

test('the link signs with the key the owner sent, and follows the config for pins and skew', async () => {
  let config = { upstream, mesh: meshOf([['a', own.publicKey]], 5_000) } as unknown as GatewayConfig;
  const mesh =
    WorkerMesh.start(
      { keyPem: undefined, sites: sitesToWire([C]) },
      deps(() => config),
    ) ?? assert.fail('no link');
  assert.equal(mesh.link.site, 'a');
  assert.equal(mesh.link.key(), undefined, 'no key before the owner sends it');
  mesh.setKey(keyPemOf(own) ?? assert.fail());
  assert.equal(mesh.link.key()?.publicKey, own.publicKey);
  assert.equal(mesh.link.key()?.peerId, own.peerId);
  // What the worker signs verifies against this site's pin.
  const url = 'http://127.0.0.1:2/v1/chat/completions';
  const headers = await signForward({
    method: 'POST',
    url,
    headers: {},
    body: Buffer.from('{}'),
    site: 'a',
    key: mesh.link.key() ?? assert.fail(),
    nowMs: 1_000,
    lifetimeMs: 5_000,
  });
  const ctx = {
    pins: mesh.link.pins(),
    nowMs: 1_000,
    maxClockSkewMs: 5_000,
    self: 'c',
    selfKey: undefined,
    url: 'http://127.0.0.1:2',
    replay: { hold: () => ({ ok: true }) as const },
  };
  const verdict = await verifyForward({ method: 'POST', target: '/v1/chat/completions', headers }, ctx);
  assert.deepEqual([verdict.ok, verdict.site], [true, 'a']);
  assert.deepEqual([...mesh.link.pins().keys()], ['a']);
  assert.equal(mesh.link.maxClockSkewMs(), 5_000);
  config = {
    upstream,
    mesh: meshOf(
      [
        ['a', own.publicKey],
        ['b', other.publicKey],
      ],
      9_000,
    ),
  } as unknown as GatewayConfig;
  assert.deepEqual([...mesh.link.pins().keys()], ['a', 'b']);
  assert.equal(mesh.link.maxClockSkewMs(), 9_000);
  assert.deepEqual(mesh.link.source.sites(), [C]);
  mesh.mirror.update(sitesToWire([{ ...C, fresh: false }]));
  assert.equal(mesh.link.source.sites()[0]?.fresh, false);
});

test('site views cross as plain data and come back equal; the signature tells a change', () => {
  const cases: RemoteSiteView[][] = [
    [],
    [C],
    [
      C,
      { id: 'd', url: undefined, fresh: false, load: 0, models: new Map() },
      { id: 'e', url: 'http://127.0.0.1:3', fresh: false, remembered: true, load: 0, models: new Map() },
    ],
  ];
  for (const views of cases) {
    const wire = sitesToWire(views);
    assert.deepEqual(structuredClone(wire), wire);
    assert.deepEqual(sitesFromWire(structuredClone(wire)), views);
  }
  assert.equal(sitesSignature(sitesToWire([C])), sitesSignature(sitesToWire([{ ...C, models: new Map(C.models) }])));
  assert.notEqual(sitesSignature(sitesToWire([C])), sitesSignature(sitesToWire([{ ...C, load: 2 }])));
});
