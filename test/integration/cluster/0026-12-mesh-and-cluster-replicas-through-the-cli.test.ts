// Issue 26, the whole gateway with both [mesh] and [cluster]: site "a" runs as two replicas (two
// real `switchyard serve` processes, one site key, one redis-server, each its own libp2p identity:
// [mesh] peer_key_file), site "b" is their peer (a third process), all gossiping over libp2p on
// 127.0.0.1, their nodes in one `switchyard sim`. With the site key as both replicas' libp2p
// identity, b kept one gossip stream for the shared peer id: the replica it did not hear could
// not forward to b, and after the publisher was killed b never heard the other (a went stale).
// Only the replica holding the leader lease publishes a's record; SIGKILL it and the other
// publishes within lease_ttl, and b keeps routing to a; requests through either replica work.
// Every process is killed in after() (and by the fixtures' exit hooks), whatever failed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startSimProcess, type SimFleetProcess } from '#test/fixtures/processes.ts';
import { startRedisServer, type RedisServer } from '#test/fixtures/redis-server.ts';
import { freePort, MeshSite, siteKeyMaterial } from '#test/integration/mesh/mesh-fleet.ts';
import { chat, metricSum, rowOf } from '#test/integration/mesh/helpers.ts';

const TTL_MS = 3_000;
/**
 * Slack on top of lease_ttl: a bound that catches a lease never taken over, generous for a busy
 * machine (each poll of a replica's /admin/runtime can take seconds there). When the takeover
 * happens, counted in asks, is tested in process (test/integration/cluster/mesh-leader-lease.test.ts).
 */
const SLACK_MS = 30_000;
/** Bound of every wait for a state (a gateway process on a busy 2-core machine is slow). */
const WAIT_MS = Number(process.env.WAIT_MS ?? 120_000);
const PREFIX = `t${randomBytes(4).toString('hex')}:`;

let redis: RedisServer | undefined;
let sim: SimFleetProcess | undefined;
let dir: string | undefined;
const replicas: MeshSite[] = [];
let peer: MeshSite | undefined;

interface Runtime {
  readonly cluster?: { readonly mesh_leader?: boolean; readonly store?: string; readonly live_replicas?: number };
}

async function runtime(site: MeshSite): Promise<Runtime> {
  return (await site.json<Runtime>('/admin/runtime')).body;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = WAIT_MS): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await check().catch(() => false)) return performance.now() - start;
    if (performance.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

before(async () => {
  redis = await startRedisServer();
  sim = await startSimProcess(
    ['a-gpu', 'b-gpu']
      .map(
        (n) =>
          `[[node]]\nname = "${n}"\nkind = "vllm"\nmodels = ["m-${n[0]}"]\ncontext = 8192\nslots = 4\nttft = "5ms"\ntokens_per_second = 2000\n`,
      )
      .join('\n'),
  );
  dir = await mkdtemp(join(tmpdir(), 'switchyard-0026-12-'));
  const keys = { a: siteKeyMaterial(), b: siteKeyMaterial() };
  // Each replica's own libp2p identity ([mesh] peer_key_file); the site key signs the records.
  const peerKeys = { a0: siteKeyMaterial(), a1: siteKeyMaterial() };
  await writeFile(join(dir, 'a.key'), keys.a.pem, { mode: 0o600 });
  await writeFile(join(dir, 'b.key'), keys.b.pem, { mode: 0o600 });
  for (const name of ['a0', 'a1'] as const) await writeFile(join(dir, `${name}.peer.key`), peerKeys[name].pem, { mode: 0o600 });
  const taken = new Set<number>();
  const ports = {
    a0: { http: await freePort(taken), p2p: await freePort(taken) },
    a1: { http: await freePort(taken), p2p: await freePort(taken) },
    b: { http: await freePort(taken), p2p: await freePort(taken) },
  };
  const addr = (p2p: number, peerId: string): string => `/ip4/127.0.0.1/tcp/${p2p}/p2p/${peerId}`;
  const pins = (['a', 'b'] as const).map((id) => `[[mesh.sites]]\nid = "${id}"\npublic_key = "${keys[id].publicKey}"`).join('\n');
  const config = (name: 'a0' | 'a1' | 'b', peers: readonly string[], cluster: string): string => {
    const id = name[0] as 'a' | 'b';
    return [
      '[server]',
      `listen = "127.0.0.1:${ports[name].http}"`,
      '[health]',
      'interval = "200ms"',
      'timeout = "5s"',
      'fail_threshold = 2',
      '[discovery]',
      'interval = "200ms"',
      'timeout = "5s"',
      '[routing]',
      'queue_timeout = "5s"',
      '[[nodes]]',
      `name = "${id}-gpu"`,
      `url = "${sim?.url(`${id}-gpu`)}"`,
      'kind = "vllm"',
      '[mesh]',
      `site = "${id}"`,
      `url = "http://127.0.0.1:${ports[name].http}"`,
      `key_file = "${join(dir ?? '', `${id}.key`)}"`,
      ...(name === 'b' ? [] : [`peer_key_file = "${join(dir ?? '', `${name}.peer.key`)}"`]),
      `listen = ["/ip4/127.0.0.1/tcp/${ports[name].p2p}"]`,
      `peers = [${peers.map((p) => `"${p}"`).join(', ')}]`,
      'heartbeat = "300ms"',
      'freshness = "6000ms"',
      pins,
      cluster,
      '',
    ].join('\n');
  };
  const cluster = (replica: string): string =>
    `[cluster]\nstore = "${redis?.url}"\nreplica = "${replica}"\nlease_ttl = "${TTL_MS}ms"\nprefix = "${PREFIX}"`;
  const site = (name: 'a0' | 'a1' | 'b', peers: readonly string[], clusterToml: string): MeshSite =>
    new MeshSite({
      id: name,
      key: keys[name[0] as 'a' | 'b'],
      httpPort: ports[name].http,
      p2pPort: ports[name].p2p,
      dir: dir ?? '',
      nodes: [],
      config: () => config(name, peers, clusterToml),
      startTimeoutMs: WAIT_MS,
    });
  peer = site('b', [addr(ports.a0.p2p, peerKeys.a0.peerId), addr(ports.a1.p2p, peerKeys.a1.peerId)], '');
  replicas.push(
    site('a0', [addr(ports.b.p2p, keys.b.peerId)], cluster('a0')),
    site('a1', [addr(ports.b.p2p, keys.b.peerId)], cluster('a1')),
  );
  await peer.start();
  for (const r of replicas) await r.start();
});

after(async () => {
  await Promise.allSettled([...replicas, ...(peer === undefined ? [] : [peer])].map((s) => s.stop('SIGKILL')));
  await sim?.stop();
  await redis?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function leaders(): Promise<(boolean | undefined)[]> {
  return Promise.all(
    replicas
      .filter((r) => r.process?.child.exitCode === null && r.process.child.signalCode === null)
      .map(async (r) => (await runtime(r)).cluster?.mesh_leader),
  );
}

let leader: MeshSite | undefined;
let other: MeshSite | undefined;

/** `r` forwards m-b to b (bounded); on a timeout the error carries what `r` knows of b and the mesh log lines. */
async function forwardsToB(r: MeshSite, timeoutMs = WAIT_MS): Promise<void> {
  await waitFor(
    async () => (await chat(r, 'm-b', `remote via ${r.id}`)).status === 200,
    `${r.id} forwards m-b to b`,
    timeoutMs,
  ).catch(async (error: unknown) => {
    const meshLines = r
      .logs()
      .filter((l) => String(l.msg).includes('mesh'))
      .slice(-10);
    throw new Error(
      `${String(error)}; ${r.id}'s record of b: ${JSON.stringify(await rowOf(r, 'b'))}; its mesh log: ${JSON.stringify(meshLines)}`,
    );
  });
}

test("one replica publishes a's record; both serve a's model; the leader forwards to b; b routes to a", async () => {
  assert.ok(peer !== undefined);
  const b = peer;
  await waitFor(async () => {
    const now = await leaders();
    return now.filter((l) => l === true).length === 1 && now.filter((l) => l === false).length === 1;
  }, 'exactly one replica holds the leader lease');
  leader = (
    await Promise.all(replicas.map(async (r) => ((await runtime(r)).cluster?.mesh_leader === true ? r : undefined)))
  ).find((r) => r !== undefined);
  other = replicas.find((r) => r !== leader);
  assert.ok(leader !== undefined && other !== undefined);
  // b sees a's record from the leader (its url is the leader's own [mesh] url).
  await waitFor(async () => (await rowOf(b, 'a'))?.fresh === true, 'b holds a fresh record of a');
  assert.equal((await rowOf(b, 'a'))?.url, leader.url, "a's record is the leader's");
  assert.ok(
    !other.logs().some((l) => l.msg === "this replica publishes the site's mesh record (leader lease held)"),
    'the other replica never held the lease',
  );
  assert.equal(metricSum(await other.metrics(), 'gateway_mesh_published_total'), 0, 'the other replica published nothing');
  assert.ok(metricSum(await leader.metrics(), 'gateway_mesh_published_total') > 0, 'the leader publishes');
  for (const r of replicas) assert.equal((await chat(r, 'm-a', `local via ${r.id}`)).status, 200, `${r.id} serves m-a`);
  await forwardsToB(leader);
  await waitFor(async () => (await chat(b, 'm-a', 'b to a')).status === 200, 'b forwards m-a to a');
});

// With the site key as every replica's libp2p identity (no peer_key_file), b kept one gossip
// stream for the shared peer id: only one replica heard b's full record, and this failed.
test('the other replica forwards to b too', async () => {
  assert.ok(other !== undefined);
  await forwardsToB(other);
  assert.ok(
    !replicas.some((r) => r.logs().some((l) => String(l.msg).includes('no [mesh] peer_key_file'))),
    'no replica warns of a shared peer id',
  );
});

let killedAt = 0;

test('SIGKILL the leader: the other holds the lease within lease_ttl, publishes, and serves', async (t) => {
  assert.ok(leader !== undefined && other !== undefined);
  const survivor = other;
  leader.signal('SIGKILL');
  killedAt = performance.now();
  const tookMs = await waitFor(
    async () => (await runtime(survivor)).cluster?.mesh_leader === true,
    'the other replica takes the leader lease',
  );
  t.diagnostic(`the other replica held the lease ${Math.round(tookMs)} ms after the SIGKILL (lease_ttl ${TTL_MS} ms)`);
  assert.ok(tookMs <= TTL_MS + SLACK_MS, `taken over within lease_ttl (took ${Math.round(tookMs)} ms)`);
  await waitFor(
    async () => survivor.logs().some((l) => l.msg === "this replica publishes the site's mesh record (leader lease held)"),
    'the survivor says it publishes',
  );
  assert.equal((await chat(survivor, 'm-a', 'survivor')).status, 200, 'the surviving replica serves');
});

// With a shared peer id b never heard the survivor's records after the kill (its gossipsub had
// no stream for the second connection of the same peer id): a turned stale at b.
test("after the kill b holds the new publisher's record and keeps routing to a; the survivor forwards to b", async (t) => {
  assert.ok(peer !== undefined && other !== undefined);
  const b = peer;
  const survivor = other;
  const bound = WAIT_MS;
  await waitFor(async () => (await rowOf(b, 'a'))?.url === survivor.url, "b holds the new publisher's record of a", bound).catch(
    async (error: unknown) => {
      const since = Date.now() - (performance.now() - killedAt);
      const lines = (site: MeshSite): string =>
        JSON.stringify(
          site
            .logs()
            .filter((l) => Number(l.time) >= since && String(l.msg).includes('mesh'))
            .slice(-12)
            .map((l) => [l.msg, l.peer, l.err, l.addr]),
        );
      throw new Error(
        `${String(error)}; b's row of a: ${JSON.stringify(await rowOf(b, 'a'))}; b's mesh log since the kill: ${lines(b)}; the survivor's: ${lines(survivor)}`,
      );
    },
  );
  await waitFor(async () => (await chat(b, 'm-a', 'b to a after the kill')).status === 200, 'b routes m-a to a again', bound);
  t.diagnostic(`b routed to a again ${Math.round(performance.now() - killedAt)} ms after the kill`);
  assert.equal((await rowOf(b, 'a'))?.fresh, true, 'a stayed a fresh site at b');
  await forwardsToB(survivor, bound);
});
