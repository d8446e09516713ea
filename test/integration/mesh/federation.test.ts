// Issue 12's "Done when", on five real gateway processes (sites a–e) on 127.0.0.1, each in front
// of its own simulated nodes, gossiping over libp2p + gossipsub with a 300 ms heartbeat and a
// 3 s freshness window. A sixth, pinned site `f` is a libp2p peer run by this test: it publishes
// a valid record, then a record for another site, a replayed one and an over-cap one, all signed
// with the wire format written independently in wire.ts.
//
// `npm run test:mesh` runs this file alone (about 20-40 s); `npm test` runs it too. The tests
// share one fleet and run in order; each leaves it as it found it (E restarted, D resumed).
//
// Every wait is for the state that matters, bounded by WAIT_MS (a busy 2-core machine running two
// suites is many times slower than one alone; a wait ends as soon as its state holds). The times
// measured against the protocol's bounds (two heartbeats, the freshness window) are judged with
// the measurement's own resolution added: the slowest poll, which such a machine stretches.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemClock } from '#src/core/clock.ts';
import { Libp2pTransport } from '#src/mesh/gossip/index.ts';
import { FAST, READ_TIMEOUT_MS, startMeshFleet, type MeshFleet, type MeshSite } from './mesh-fleet.ts';
import { timedEventually } from '#test/fixtures/http.ts';
import { chat, listedModels, metricSum, metricValue, rowOf, sitesOf, waitFor } from './helpers.ts';
import { forwardHeaders, libp2pKeyOf, recordMessage, type WireRecord } from './wire.ts';

const HEARTBEAT_MS = 300;
const FRESHNESS_MS = 3_000;
/** Gossip's own hops on a busy 2-core machine: what a measured time may exceed its bound by, besides its resolution. */
const SLACK_MS = 400;
/** How long a wait for a state may take before it fails. */
const WAIT_MS = 120_000;
const IDS = ['a', 'b', 'c', 'd', 'e'] as const;

let fleet: MeshFleet;
let f: Libp2pTransport;
/** Every message `f` heard, with the site its record names. */
const heard: { site: string; revision: number; full: boolean; data: Uint8Array }[] = [];
const site = (id: string): MeshSite => fleet.site(id);
const all = (): MeshSite[] => IDS.map(site);

async function simRequests(node: string, model: string): Promise<number> {
  const res = await fetch(`${fleet.sim.url(node)}/__sim/requests`, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  const recorded = (await res.json()) as { path: string; model?: string }[];
  return recorded.filter((r) => r.model === model && r.path.includes('/chat/completions')).length;
}

async function everyoneFresh(ids: readonly string[] = IDS): Promise<boolean> {
  for (const id of ids) {
    const doc = await sitesOf(site(id));
    const others = ids.filter((o) => o !== id);
    if (!others.every((o) => doc.sites.find((r) => r.id === o)?.fresh === true)) return false;
  }
  return true;
}

/** A model each site's own nodes serve (e-base: E's first node). */
const OWN_MODEL: Readonly<Record<(typeof IDS)[number], string>> = {
  a: 'common',
  b: 'common',
  c: 'c-model',
  d: 'd-model',
  e: 'e-base',
};

/**
 * Whether site `id` takes a forward now (one signed by f for a model it serves itself). A site's
 * first run (a fresh key directory) takes forwards at once, as does one restarted after a clean
 * stop; one restarted after a crash refuses every signature the run that crashed could have
 * accepted, so it takes forwards from max_clock_skew after its start on
 * (docs/federation-forwarding.md, "Across a restart").
 */
async function takesForwards(id: (typeof IDS)[number]): Promise<boolean> {
  const url = `${site(id).url}/v1/chat/completions`;
  const body = JSON.stringify({ model: OWN_MODEL[id], messages: [{ role: 'user', content: 'up?' }], max_tokens: 1 });
  const res = await fetch(url, {
    method: 'POST',
    headers: await forwardHeaders({ url, body, site: 'f', key: fleet.extraKeys.get('f')!.privateKey }),
    body,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  await res.arrayBuffer();
  return res.status === 200;
}

async function counter(s: MeshSite, name: string, labels: string): Promise<number> {
  return metricValue(await s.metrics(), name, labels);
}

function fRecord(over: Partial<WireRecord> & { revision: number }): WireRecord {
  return {
    v: 1,
    site: 'f',
    url: 'http://127.0.0.1:9',
    issued_at: Date.now(),
    models: [{ id: 'f-model', ctx: 2048 }],
    load: { in_flight: 0, queued: 0, slots: 1 },
    ...over,
  };
}

before(async () => {
  fleet = await startMeshFleet({
    sites: [
      { id: 'a', nodes: [{ name: 'a-1', models: ['common'], context: 4_096 }] },
      { id: 'b', nodes: [{ name: 'b-1', models: ['common'], context: 32_768 }] },
      { id: 'c', nodes: [{ name: 'c-1', models: ['c-model'], context: 8_192 }] },
      { id: 'd', nodes: [{ name: 'd-1', models: ['d-model'], context: 8_192 }] },
      {
        id: 'e',
        nodes: [
          { name: 'e-1', models: ['e-base'], context: 8_192 },
          { name: 'e-2', models: ['e-only'], context: 8_192 },
        ],
        dormant: ['e-2'],
      },
    ],
    extraPins: ['f'],
    timings: FAST,
  });
  f = new Libp2pTransport({
    privateKey: libp2pKeyOf(fleet.extraKeys.get('f')!),
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers: all().map((s) => s.p2pAddr),
    maxMessageBytes: 256 * 1024,
    clock: systemClock,
    random: Math.random,
  });
  f.onMessage((data) => {
    try {
      const parsed = JSON.parse(new TextDecoder().decode(data)) as {
        record?: { site: string; revision: number; models?: unknown };
      };
      if (parsed.record !== undefined)
        heard.push({
          site: parsed.record.site,
          revision: parsed.record.revision,
          full: parsed.record.models !== undefined,
          data,
        });
    } catch {
      // not a record (a want): ignore
    }
    return 'accept';
  });
  await f.start();
  await waitFor(() => everyoneFresh(), 'the five sites to see each other fresh', WAIT_MS, 100);
});

after(async () => {
  await f?.stop();
  await fleet?.stop();
});

test('a model served only at site E is reachable through A within two heartbeats of appearing', async () => {
  assert.equal((await listedModels(site('a'))).includes('e-only'), false);
  await site('e').setNodes(['e-1', 'e-2']);
  // "Appearing": the moment E's own published set has it (its discovery of the new node done).
  await waitFor(
    async () => (await sitesOf(site('e'))).site?.models.some((m) => m.id === 'e-only') === true,
    'E to serve e-only',
    WAIT_MS,
    10,
  );
  const { tookMs, resolutionMs } = await timedEventually(
    async () => (await listedModels(site('a'))).includes('e-only'),
    WAIT_MS,
    'A to list e-only',
    10,
  );
  console.log(
    `# e-only routable at A ${Math.round(tookMs)} ms after E published it (bound ${2 * HEARTBEAT_MS} ms, resolution ${Math.round(resolutionMs)} ms)`,
  );
  assert.ok(tookMs <= 2 * HEARTBEAT_MS + SLACK_MS + resolutionMs, `took ${tookMs} ms (resolution ${resolutionMs} ms)`);
  const before = await simRequests('e-2', 'e-only');
  const res = await chat(site('a'), 'e-only', 'hello from a');
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(await simRequests('e-2', 'e-only'), before + 1, "served by E's node");
});

test('it leaves A within the freshness window after E stops serving it', async () => {
  await site('e').setNodes(['e-1']);
  await waitFor(
    async () => (await sitesOf(site('e'))).site?.models.some((m) => m.id === 'e-only') === false,
    'E to drop e-only',
    WAIT_MS,
    10,
  );
  const { tookMs, resolutionMs } = await timedEventually(
    async () => !(await listedModels(site('a'))).includes('e-only'),
    WAIT_MS,
    'A to drop e-only',
    10,
  );
  console.log(
    `# e-only gone from A ${Math.round(tookMs)} ms after E dropped it (bound ${FRESHNESS_MS} ms, resolution ${Math.round(resolutionMs)} ms)`,
  );
  assert.ok(tookMs <= FRESHNESS_MS + SLACK_MS + resolutionMs, `took ${tookMs} ms (resolution ${resolutionMs} ms)`);
  const res = await chat(site('a'), 'e-only', 'still there?');
  assert.notEqual(res.status, 200, JSON.stringify(res.body));
});

test('killing E makes A fail closed for E’s models within the window; E restarted is fresh again', async () => {
  assert.equal((await chat(site('a'), 'e-base', 'before the kill')).status, 200);
  await site('e').stop('SIGKILL');
  const { tookMs, resolutionMs } = await timedEventually(
    async () => (await rowOf(site('a'), 'e'))?.fresh === false,
    WAIT_MS,
    'A to mark E stale',
    10,
  );
  console.log(
    `# A failed closed for E ${Math.round(tookMs)} ms after the kill (bound ${FRESHNESS_MS} ms, resolution ${Math.round(resolutionMs)} ms)`,
  );
  assert.ok(tookMs <= FRESHNESS_MS + SLACK_MS + resolutionMs, `took ${tookMs} ms (resolution ${resolutionMs} ms)`);
  assert.equal((await listedModels(site('a'))).includes('e-base'), false);
  const res = await chat(site('a'), 'e-base', 'after the kill');
  assert.notEqual(res.status, 200, JSON.stringify(res.body));
  assert.equal(metricValue(await site('a').metrics(), 'gateway_mesh_site_fresh', 'site="e"'), 0);
  // Same key, same ports: the others redial it, and its records are accepted again (the
  // revision clock is wall-clock based, so the restarted site's revisions are higher).
  await site('e').start();
  await waitFor(() => everyoneFresh(), 'every site fresh again after E restarted', WAIT_MS, 100);
  // Fresh may come before E's discovery has found its node again (its first records list nothing):
  // A routes e-base once E's record lists it again.
  await waitFor(async () => (await listedModels(site('a'))).includes('e-base'), 'A to list e-base again', WAIT_MS, 25);
  await waitFor(
    () => takesForwards('e'),
    'E, restarted after a crash, to take forwards (max_clock_skew after its start)',
    WAIT_MS,
    500,
  );
  assert.equal((await chat(site('a'), 'e-base', 'after the restart')).status, 200);
});

test('E stopped cleanly (SIGTERM) saves its replay memory and, restarted, takes forwards at once: none refused replayed', async () => {
  const url = `${site('e').url}/v1/chat/completions`;
  const body = JSON.stringify({ model: OWN_MODEL.e, messages: [{ role: 'user', content: 'before the stop' }], max_tokens: 1 });
  const nonce = randomBytes(16).toString('base64url');
  const res = await fetch(url, {
    method: 'POST',
    headers: await forwardHeaders({ url, body, site: 'f', key: fleet.extraKeys.get('f')!.privateKey, nonce }),
    body,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 200);
  await site('e').stop('SIGTERM');
  // The record beside E's key file holds the signature it served (until its window closes).
  const saved = JSON.parse(await readFile(join(site('e').dir, 'e.key.replay.json'), 'utf8')) as {
    state: string;
    used: Record<string, [string, number][]>;
  };
  assert.equal(saved.state, 'stopped');
  assert.ok(
    (saved.used.f ?? []).some(([n]) => n === nonce),
    JSON.stringify(saved),
  );
  await site('e').start();
  assert.ok(
    site('e')
      .logs()
      .some((line) => /stopped cleanly/.test(String(line.msg))),
    'E carried the memory on',
  );
  // Polled from the moment E listens: with the blackout the first forwards would be refused replayed.
  await waitFor(() => takesForwards('e'), 'E, restarted after a clean stop, to take forwards', WAIT_MS, 100);
  assert.equal(metricValue(await site('e').metrics(), 'gateway_mesh_forwarded_in_total', 'site="f",result="replayed"'), 0);
  await waitFor(() => everyoneFresh(), 'every site fresh again after E restarted', WAIT_MS, 100);
});

test('a partitioned site rejoins and converges', async () => {
  const revisionBefore = (await rowOf(site('a'), 'd'))?.revision ?? 0;
  // SIGSTOP cuts D off (no gossip in or out, its connections idle) without closing its sockets.
  site('d').signal('SIGSTOP');
  try {
    await waitFor(async () => (await rowOf(site('a'), 'd'))?.fresh === false, 'A to mark D stale', WAIT_MS, 25);
    assert.equal((await listedModels(site('a'))).includes('d-model'), false);
  } finally {
    site('d').signal('SIGCONT');
  }
  const tookMs = await waitFor(() => everyoneFresh(), 'all five fresh after D resumed', WAIT_MS, 25);
  console.log(`# partition healed: all five sites fresh ${Math.round(tookMs)} ms after D resumed`);
  assert.ok(((await rowOf(site('a'), 'd'))?.revision ?? 0) > revisionBefore);
  assert.equal((await chat(site('a'), 'd-model', 'after the partition')).status, 200);
});

test('a prompt too long for A’s copy of a model goes to a site with a larger context', async () => {
  // ~6,000 sim tokens: over A's 4,096, within B's 32,768.
  const prompt = 'word '.repeat(6_000);
  const [aBefore, bBefore] = [await simRequests('a-1', 'common'), await simRequests('b-1', 'common')];
  const res = await chat(site('a'), 'common', prompt);
  assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
  assert.equal(await simRequests('b-1', 'common'), bBefore + 1, "B's node served it");
  assert.equal(await simRequests('a-1', 'common'), aBefore, "A's node never saw it");
  assert.equal((await chat(site('a'), 'common', 'short')).status, 200);
  assert.equal(await simRequests('a-1', 'common'), aBefore + 1, 'a short prompt stays local');
});

test('a peer publishing a record for another site is rejected by all', async () => {
  // First valid records of f's own: every site accepts them, so f is heard by all. f publishes one
  // every heartbeat while the test waits, as a site does: a single record is fresh for one window
  // only, which a busy machine can spend before the five sites have all been read.
  const publishOwn = (): Promise<void> =>
    f.publish(recordMessage(fRecord({ revision: Date.now() * 1024 }), fleet.extraKeys.get('f')!.privateKey));
  await publishOwn();
  const heartbeat = setInterval(() => void publishOwn().catch(() => undefined), HEARTBEAT_MS);
  try {
    await waitFor(
      async () => (await Promise.all(all().map((s) => rowOf(s, 'f')))).every((r) => r?.fresh === true),
      'every site to accept f',
      WAIT_MS,
    );
  } finally {
    clearInterval(heartbeat);
  }
  // The four others find it signed by the wrong key (bad_signature); c itself never takes a
  // record of its own site from anyone (its own id is not among the sites it accepts).
  const rejections = async (s: MeshSite): Promise<number> =>
    s.id === 'c'
      ? metricSum(await s.metrics(), 'gateway_mesh_records_rejected_total')
      : counter(s, 'gateway_mesh_records_rejected_total', 'reason="bad_signature"');
  const before = await Promise.all(all().map(rejections));
  const forged: WireRecord = {
    v: 1,
    site: 'c',
    url: 'http://127.0.0.1:9',
    revision: Number.MAX_SAFE_INTEGER - 1,
    issued_at: Date.now(),
    models: [{ id: 'forged-model' }],
    load: { in_flight: 0, queued: 0, slots: 99 },
  };
  await f.publish(recordMessage(forged, fleet.extraKeys.get('f')!.privateKey));
  await waitFor(
    async () => (await Promise.all(all().map(rejections))).every((n, i) => n > before[i]!),
    'every site to count the rejection',
    WAIT_MS,
  );
  for (const s of all()) {
    if (s.id === 'c') continue;
    const row = await rowOf(s, 'c');
    assert.equal(
      row?.models.some((m) => m.id === 'forged-model'),
      false,
      `${s.id} kept c's real models`,
    );
    assert.notEqual(row?.revision, forged.revision);
  }
  assert.equal((await listedModels(site('a'))).includes('forged-model'), false);
});

test('a replayed older revision is ignored', async () => {
  const old = heard.find((h) => h.site === 'b' && h.full);
  assert.ok(old !== undefined, 'f heard a full record of b');
  await waitFor(
    async () => ((await rowOf(site('a'), 'b'))?.revision ?? 0) > old.revision,
    'b to publish a newer revision',
    WAIT_MS,
  );
  const others = all().filter((s) => s.id !== 'b');
  // A record captured at start may by now be older than freshness + max_clock_skew: then it is
  // refused by age (stale_record) before its revision is read; either way it is a refused replay.
  const refused = async (s: MeshSite): Promise<number> =>
    (await counter(s, 'gateway_mesh_records_rejected_total', 'reason="replay"')) +
    (await counter(s, 'gateway_mesh_records_rejected_total', 'reason="stale_record"'));
  const before = await Promise.all(others.map(refused));
  const revisionsBefore = await Promise.all(others.map(async (s) => (await rowOf(s, 'b'))?.revision ?? 0));
  await f.publish(old.data);
  await waitFor(
    async () => (await Promise.all(others.map(refused))).every((n, i) => n > before[i]!),
    'every other site to count a replay rejection',
    WAIT_MS,
  );
  const revisionsAfter = await Promise.all(others.map(async (s) => (await rowOf(s, 'b'))?.revision ?? 0));
  revisionsAfter.forEach((r, i) => assert.ok(r >= revisionsBefore[i]!, `${others[i]!.id} never went back to b's older revision`));
});

test('an over-cap record is rejected, and what was known of the site is kept', async () => {
  const before = await Promise.all(all().map((s) => counter(s, 'gateway_mesh_records_rejected_total', 'reason="over_cap"')));
  const models = Array.from({ length: FAST.maxModelsPerSite + 1 }, (_, i) => ({ id: `f-model-${i}` }));
  await f.publish(recordMessage(fRecord({ revision: Date.now() * 1024 + 7, models }), fleet.extraKeys.get('f')!.privateKey));
  await waitFor(
    async () =>
      (await Promise.all(all().map((s) => counter(s, 'gateway_mesh_records_rejected_total', 'reason="over_cap"')))).every(
        (n, i) => n > before[i]!,
      ),
    'every site to count an over_cap rejection',
    WAIT_MS,
  );
  for (const s of all()) {
    const row = await rowOf(s, 'f');
    assert.deepEqual(
      row?.models.map((m) => m.id),
      ['f-model'],
      `${s.id} kept f's last accepted models`,
    );
  }
});

test('a forwarded request is never forwarded twice: served from local nodes only', async () => {
  const key = fleet.extraKeys.get('f')!.privateKey;
  const body = JSON.stringify({ model: 'c-model', messages: [{ role: 'user', content: 'one hop' }], max_tokens: 4 });
  const cBefore = await simRequests('c-1', 'c-model');
  // Control: signed by f to C, which serves c-model locally: accepted and served.
  const toC = `${site('c').url}/v1/chat/completions`;
  const ok = await fetch(toC, {
    method: 'POST',
    headers: await forwardHeaders({ url: toC, body, site: 'f', key }),
    body,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  assert.equal(ok.status, 200, await ok.text());
  // The same, to B: B knows C serves c-model, but a forwarded request goes no further.
  const toB = `${site('b').url}/v1/chat/completions`;
  const res = await fetch(toB, {
    method: 'POST',
    headers: await forwardHeaders({ url: toB, body, site: 'f', key }),
    body,
    signal: AbortSignal.timeout(READ_TIMEOUT_MS),
  });
  const text = await res.text();
  assert.notEqual(res.status, 200, text);
  assert.notEqual(res.status, 401, `the signature was valid: ${text}`);
  assert.equal(await simRequests('c-1', 'c-model'), cBefore + 1, 'C saw only the direct request');
});

test('an unsigned or wrongly signed forwarded request gets 401', async () => {
  const url = `${site('a').url}/v1/chat/completions`;
  const body = JSON.stringify({ model: 'common', messages: [{ role: 'user', content: 'who are you' }], max_tokens: 4 });
  const send = async (headers: Record<string, string>): Promise<number> =>
    (await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(READ_TIMEOUT_MS) })).status;
  assert.equal(await send({ 'content-type': 'application/json', 'x-switchyard-forwarded-by': 'b' }), 401, 'unsigned');
  // Claims to be b, signed with f's key.
  assert.equal(
    await send(await forwardHeaders({ url, body, site: 'b', key: fleet.extraKeys.get('f')!.privateKey })),
    401,
    'signed by another key',
  );
  // Signed by a key pinned nowhere, for a site pinned nowhere.
  assert.equal(
    await send(await forwardHeaders({ url, body, site: 'stranger', key: fleet.extraKeys.get('f')!.privateKey })),
    401,
    'unknown site',
  );
  // Valid signature, stale: created and expired long ago (outside the skew window).
  assert.equal(
    await send(
      await forwardHeaders({ url, body, site: 'f', key: fleet.extraKeys.get('f')!.privateKey, nowMs: Date.now() - 600_000 }),
    ),
    401,
    'expired',
  );
  // Control: the same, correctly signed by f, is served.
  assert.equal(
    await send(await forwardHeaders({ url, body, site: 'f', key: fleet.extraKeys.get('f')!.privateKey })),
    200,
    'correctly signed',
  );
});
