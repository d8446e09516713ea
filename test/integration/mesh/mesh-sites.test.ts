// Federation's control plane over real gateways (issue 12): three in-process gateways, each with
// its own simulated fleet, gossiping on one in-memory bus. Their model sets come from their own
// discovery; /admin/sites, /metrics and the logs are what the tests read. Real short intervals:
// heartbeat 200 ms, freshness 2 s (ten heartbeats: a site turns stale when it stops or is cut
// off, not because a busy machine delayed a few heartbeats). Waits are for states, looked at
// again on the events that change them (events.ts), bounded generously; the times measured
// against the protocol's bounds are judged with their poll resolution.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryBus, type MemoryTransport } from '#src/mesh/index.ts';
import type { SiteRecord } from '#src/mesh/site-record.ts';
import type { SitesDocument } from '#src/mesh/sites-document.ts';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startFleetAndGateway, startGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, timedEventually } from '#test/fixtures/http.ts';
import { EventBus } from '#src/core/events.ts';
import { on, untilEvent, type Trigger } from '#test/fixtures/events.ts';
import { logLines, nodeChanges, tapJudgements } from '#test/fixtures/gateway-waits.ts';
import { signRecord } from '#src/mesh/record-codec.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';

const HEARTBEAT_MS = 200;
const FRESHNESS_MS = 2_000;
/** How long a wait for a state may take before it fails (a busy 2-core machine is many times slower than one alone). */
const WAIT_MS = 60_000;
const IDS = ['a', 'b', 'c'] as const;
type Id = (typeof IDS)[number];

const bus = new MemoryBus();
const keys = new Map<Id, SiteKey>(IDS.map((id) => [id, newSiteKey()]));
const ROGUE = newSiteKey();
const sites = new Map<Id, FleetAndGateway>();
/** Each site's gossip judged (its transport tapped). */
const judgedAt = new Map<Id, Trigger>();
let rogue: MemoryTransport;

function fleet(id: Id): string {
  return `
[[node]]
name = "${id}-gpu"
kind = "vllm"
models = ["m-${id}", "shared"]
context = ${id === 'c' ? 32_768 : 8_192}
ttft = "2ms"
tokens_per_second = 1000
`;
}

/** The site's [mesh] section (pins `pinned`), as an operator writes it. */
function meshToml(id: Id, pinned: readonly Id[] = IDS): string {
  const lines = [
    '[mesh]',
    `site = "${id}"`,
    `url = "http://127.0.0.1:1/${id}"`,
    `key_file = "/unused/${id}.key"`,
    'listen = ["/ip4/127.0.0.1/tcp/0"]',
    `heartbeat = "${HEARTBEAT_MS}ms"`,
    `freshness = "${FRESHNESS_MS}ms"`,
    'max_models_per_site = 4',
    // The attacker of these tests is let in (as a relay would be), so its messages are judged.
    `allowed_peers = ["${ROGUE.peerId}"]`,
    id === 'b' ? 'static_models = [{ id = "static-b", ctx = 2048 }]' : '',
  ];
  for (const pin of pinned) lines.push('[[mesh.sites]]', `id = "${pin}"`, `public_key = "${keys.get(pin)?.publicKey ?? ''}"`);
  return lines.join('\n');
}

function configFor(id: Id, url: string, pinned: readonly Id[] = IDS): string {
  return gatewayToml([{ name: `${id}-gpu`, url, kind: 'vllm' }], meshToml(id, pinned));
}

async function startSite(id: Id): Promise<FleetAndGateway> {
  const key = keys.get(id) ?? assert.fail();
  const site = await startFleetAndGateway(fleet(id), (sim) => configFor(id, sim.url(`${id}-gpu`)), {
    // c's listing stays degraded (last-known-good) for four failed fetches before it expires.
    adjust: (config) => (id === 'c' ? { ...config, health: { ...config.health, failThreshold: 5 } } : config),
    meshGossip: {
      key,
      transport: (own) => {
        const tapped = tapJudgements(bus.transport(`peer-${id}`, own.peerId), `gossip judged at ${id}`);
        judgedAt.set(id, tapped.judged);
        return tapped.transport;
      },
      replaySinceMs: 0,
    },
  });
  sites.set(id, site);
  return site;
}

function site(id: Id): FleetAndGateway {
  return sites.get(id) ?? assert.fail(`site ${id} not running`);
}

async function sitesOf(id: Id): Promise<SitesDocument> {
  const res = await httpJson('GET', `${site(id).gw.url}/admin/sites`);
  assert.equal(res.status, 200);
  return res.json<SitesDocument>();
}

async function remote(id: Id, of: Id): Promise<SitesDocument['sites'][number]> {
  return (await sitesOf(id)).sites.find((s) => s.id === of) ?? assert.fail(`${of} not listed at ${id}`);
}

/** What can change these sites' documents: gossip each judged, their log lines (freshness), their nodes' listings. */
function changesAt(...at: readonly Id[]): Trigger[] {
  return at.flatMap((id) => [judgedAt.get(id) ?? assert.fail(), logLines(site(id).gw), nodeChanges(site(id).gw)]);
}

const ids = (row: { models: readonly { id: string }[] }): string[] => row.models.map((m) => m.id);

before(async () => {
  for (const id of IDS) await startSite(id);
  rogue = bus.transport('peer-rogue', ROGUE.peerId);
  await rogue.start();
});

after(async () => {
  await rogue.stop();
  for (const s of sites.values()) await s.close();
});

test('a site publishes what its own nodes list (largest context) plus its static models; peers see it', async () => {
  await untilEvent(
    async () => ids(await remote('a', 'b')).includes('m-b') && ids(await remote('a', 'c')).includes('m-c'),
    changesAt('a'),
    'a learns b and c',
  );
  const own = (await sitesOf('b')).site ?? assert.fail();
  assert.deepEqual(own.models, [
    { id: 'm-b', ctx: 8192 },
    { id: 'shared', ctx: 8192 },
    { id: 'static-b', ctx: 2048 },
  ]);
  const c = await remote('a', 'c');
  assert.equal(c.fresh, true);
  assert.deepEqual(c.models, [
    { id: 'm-c', ctx: 32_768 },
    { id: 'shared', ctx: 32_768 },
  ]);
  assert.equal(c.url, 'http://127.0.0.1:1/c');
  assert.ok(c.revision !== undefined && c.revision > 0);
  assert.deepEqual(Object.keys(c.load ?? {}).sort(), ['in_flight', 'queued', 'slots']);
  const doc = await sitesOf('a');
  assert.equal(doc.mesh, true);
  assert.deepEqual(
    doc.sites.map((s) => s.id),
    ['b', 'c'],
    'every pinned site but this one',
  );
});

test('a model appearing at c reaches a within two heartbeats of c publishing it; it leaves when c stops serving it', async () => {
  const cNode = site('c').sim.url('c-gpu');
  await setSimFaults(cNode, { models: 'empty' });
  await untilEvent(async () => !ids(await remote('a', 'c')).includes('m-c'), changesAt('a'), 'm-c leaves a once c lists nothing');
  assert.deepEqual(ids((await sitesOf('c')).site ?? assert.fail()), []);
  await setSimFaults(cNode, { models: 'none' });
  await untilEvent(
    async () => ids((await sitesOf('c')).site ?? assert.fail()).includes('m-c'),
    changesAt('c'),
    'c lists m-c again',
  );
  const { tookMs, resolutionMs } = await timedEventually(
    async () => ids(await remote('a', 'c')).includes('m-c'),
    WAIT_MS,
    'a sees m-c',
  );
  assert.ok(
    tookMs <= 2 * HEARTBEAT_MS + 200 + resolutionMs,
    `a saw m-c ${tookMs} ms after c published it (resolution ${resolutionMs} ms)`,
  );
});

test('a malformed listing at c keeps what c publishes while degraded; an expired listing drops it, as local routing does', async () => {
  const cNode = site('c').sim.url('c-gpu');
  const logged = (msg: string) =>
    site('c')
      .gw.logs()
      .some((l) => l.msg === msg && l.node === 'c-gpu');
  await setSimFaults(cNode, { models: 'garbage' });
  await untilEvent(() => logged('model discovery failed'), changesAt('c'), 'c-gpu listing degraded');
  assert.deepEqual(ids((await sitesOf('c')).site ?? assert.fail()), ['m-c', 'shared']);
  assert.deepEqual(ids(await remote('a', 'c')), ['m-c', 'shared']);
  await untilEvent(() => logged('model discovery expired'), changesAt('c'), 'c-gpu listing expired');
  await untilEvent(async () => ids(await remote('a', 'c')).length === 0, changesAt('a'), 'the expired listing leaves the set');
  await setSimFaults(cNode, { models: 'none' });
  await untilEvent(async () => ids(await remote('a', 'c')).includes('m-c'), changesAt('a'), 'm-c back at a');
});

test('a partitioned site goes stale for the others and converges when the partition heals', async () => {
  bus.partition(['peer-c']);
  await untilEvent(
    async () => !(await remote('a', 'c')).fresh && !(await remote('c', 'b')).fresh,
    changesAt('a', 'c'),
    'c stale at a, b stale at c',
  );
  const metrics = (await httpJson('GET', `${site('a').gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_mesh_site_fresh\{site="c"\} 0/);
  assert.match(metrics, /gateway_mesh_site_fresh\{site="b"\} 1/);
  await setSimFaults(site('c').sim.url('c-gpu'), { models: 'empty' });
  await untilEvent(
    async () => ids((await sitesOf('c')).site ?? assert.fail()).length === 0,
    changesAt('c'),
    'c changes its set while cut off',
  );
  bus.heal();
  await untilEvent(
    async () => (await remote('a', 'c')).fresh && ids(await remote('a', 'c')).length === 0 && (await remote('c', 'b')).fresh,
    changesAt('a', 'c'),
    'converged after heal',
  );
  await setSimFaults(site('c').sim.url('c-gpu'), { models: 'none' });
  await untilEvent(async () => ids(await remote('a', 'c')).includes('m-c'), changesAt('a'), 'm-c back');
  // Each transition is logged once: stale and fresh lines for c alternate (on a busy machine c may
  // also flap on its own heartbeats, each flap being a real transition, logged once).
  const STALE = 'mesh site stale: its models are not routed to until a newer record arrives';
  const transitions = site('a')
    .gw.logs()
    .filter((l) => (l.msg === STALE || l.msg === 'mesh site fresh') && l.site === 'c')
    .map((l) => (l.msg === STALE ? 'stale' : 'fresh'));
  assert.ok(transitions.includes('stale'), `the stale transition is logged: ${transitions.join(' ')}`);
  assert.ok(
    transitions.every((t, i) => i === 0 || t !== transitions[i - 1]),
    `each transition is logged once: ${transitions.join(' ')}`,
  );
});

test('forged, replayed and over-cap records are rejected by every site and change nothing', async () => {
  const recorded: Uint8Array[] = [];
  const rogueHeard = new EventBus<{ record: undefined }>();
  rogue.onMessage((data, from) => {
    if (from === keys.get('c')?.peerId) recorded.push(data);
    rogueHeard.emit('record', undefined);
    return 'accept';
  });
  await untilEvent(() => recorded.length > 0, [on(rogueHeard, 'record')], 'a record of c');
  const before = await remote('a', 'c');
  const now = Date.now();
  const forged: SiteRecord = {
    v: 1,
    site: 'c',
    url: 'http://127.0.0.1:1/evil',
    revision: now * 1024 + 1_000_000_000,
    issued_at: now,
    models: [{ id: 'evil' }],
    load: { in_flight: 0, queued: 0, slots: 1 },
  };
  await rogue.publish(signRecord(forged, keys.get('b') ?? assert.fail()));
  await rogue.publish(
    signRecord({ ...forged, models: ['1', '2', '3', '4', '5'].map((id) => ({ id })) }, keys.get('c') ?? assert.fail()),
  );
  // The replay: c's first record, once a holds a newer one of c's (c heartbeats on).
  const first = recorded[0] ?? assert.fail();
  const firstRevision =
    (JSON.parse(new TextDecoder().decode(first)) as { record?: { revision: number } }).record?.revision ??
    assert.fail('c sends records');
  await untilEvent(
    async () =>
      ((await remote('a', 'c')).revision ?? 0) > firstRevision && ((await remote('b', 'c')).revision ?? 0) > firstRevision,
    changesAt('a', 'b'),
    'a and b to hold a newer record of c',
  );
  await rogue.publish(first);
  for (const id of ['a', 'b'] as const) {
    await untilEvent(
      async () => {
        const text = (await httpJson('GET', `${site(id).gw.url}/metrics`)).text;
        return ['bad_signature', 'over_cap', 'replay'].every((reason) =>
          new RegExp(`gateway_mesh_records_rejected_total\\{reason="${reason}"\\} [1-9]`).test(text),
        );
      },
      changesAt(id),
      `${id} counts each rejection`,
    );
    const c = await remote(id, 'c');
    assert.deepEqual(ids(c), ['m-c', 'shared']);
    assert.equal(c.url, 'http://127.0.0.1:1/c');
    assert.ok((c.revision ?? 0) < forged.revision, 'the forged revision was not taken');
    assert.ok(c.last_rejection !== undefined);
  }
  assert.ok(((await remote('a', 'c')).revision ?? 0) >= (before.revision ?? 0), 'c kept publishing its own');
  const logged = site('a')
    .gw.logs()
    .filter((l) => l.msg === 'mesh record rejected (logged once per peer and reason)' && l.peer === ROGUE.peerId);
  assert.deepEqual(logged.map((l) => l.reason).sort(), ['bad_signature', 'over_cap', 'replay']);
  const metrics = (await httpJson('GET', `${site('a').gw.url}/metrics`)).text;
  assert.match(metrics, /gateway_mesh_records_accepted_total\{site="c"\} [1-9]/);
  assert.match(metrics, /gateway_mesh_published_total\{kind="digest"\} [1-9]/);
  assert.match(metrics, /gateway_mesh_published_total\{kind="full"\} [1-9]/);
  assert.match(metrics, /gateway_mesh_gossip_bytes_total\{direction="out"\} [1-9]/);
});

test('a reload applies pin changes at once, keeping what the other pins learned', async () => {
  const a = site('a');
  const url = a.sim.url('a-gpu');
  const revisionOfB = (await remote('a', 'b')).revision ?? 0;
  assert.deepEqual(await a.gw.reload(configFor('a', url, ['a', 'b'])), { ok: true });
  assert.deepEqual(
    (await sitesOf('a')).sites.map((s) => s.id),
    ['b'],
  );
  assert.ok(((await remote('a', 'b')).revision ?? 0) >= revisionOfB, 'b kept');
  // c is no pinned site of a's any more: a no longer keeps it connected (nor hears its records).
  await untilEvent(() => !bus.neighbours('peer-a', 'peer-c'), changesAt('a'), 'c disconnected from a');
  assert.deepEqual(await a.gw.reload(configFor('a', url)), { ok: true });
  await untilEvent(
    async () => (await remote('a', 'c')).fresh && ids(await remote('a', 'c')).includes('m-c'),
    changesAt('a'),
    'c pinned again and learned from its next record',
  );
});

test('a site that stops is stale for the others within the freshness window', async () => {
  await untilEvent(async () => (await remote('a', 'c')).fresh, changesAt('a'), 'c fresh');
  await site('c').close();
  sites.delete('c');
  const { tookMs, resolutionMs } = await timedEventually(async () => !(await remote('a', 'c')).fresh, WAIT_MS, 'c stale at a');
  assert.ok(
    tookMs <= FRESHNESS_MS + 2 * HEARTBEAT_MS + 300 + resolutionMs,
    `stale after ${tookMs} ms (resolution ${resolutionMs} ms)`,
  );
  assert.deepEqual(ids(await remote('a', 'c')), ['m-c', 'shared'], 'the last set is kept, marked stale');
});

test('[mesh] with a key file that cannot be read, or a key that is not its own pin, refuses to start with a clear error', async () => {
  const toml = configFor('a', 'http://127.0.0.1:1');
  // No injected transport: the production path loads key_file (absent here) before any socket opens.
  await assert.rejects(
    startGateway(toml),
    /site key file \/unused\/a.key: cannot read it \(no such file; create one with switchyard keygen/,
  );
  await assert.rejects(
    startGateway(toml, { meshGossip: { key: newSiteKey(), transport: () => bus.transport('peer-x') } }),
    /pins site "a" \(this site\) with public key .* but key_file holds/,
  );
});
