// The owner's management of its workers, with stand-in threads: a worker that ends unexpectedly
// gives back every lease it held and is started again on the same port, within a restart budget;
// a drain waits for every worker to say it drained.
import { TenantLedger, tenantsOwnerSide } from '#src/tenants/index.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission } from '#src/scheduler/index.ts';
import { MAX_RESTARTS, RequestWorkers } from '#src/workers/request-workers.ts';
import type { OwnerMessage, WorkerInit, WorkerMessage } from '#src/workers/protocol.ts';
import type { WorkerThread } from '#src/workers/worker-link.ts';
import {
  meshOwnerSide,
  sitesFromWire,
  type MeshInit,
  type MeshOwnerMessage,
  type WorkersMeshSource,
} from '#src/mesh/crossing/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';
import { testSiteKey } from '#test/fixtures/site-keys.ts';

const CONFIG = {
  server: { listen: { host: '127.0.0.1', port: 0 } },
  upstream: { maxConnections: 8 },
} as unknown as GatewayConfig;
const VIEWS: readonly NodeView[] = [{ spec: { name: 'n1' } } as unknown as NodeView];
const REQ = { model: 'm', triedNodes: new Set<string>() } as unknown as RouteRequest;
const SETTINGS = { queueTimeoutMs: 1, maxQueue: 1, missWaitMs: 0, swapAfterMs: 0, loadTimeoutMs: 1 };

/** A stand-in thread: listens at once (port 4321 when asked for 0), drains when told, records what it got. */
class FakeThread extends EventEmitter {
  readonly received: OwnerMessage[] = [];
  readonly init: WorkerInit;
  constructor(init: WorkerInit) {
    super();
    this.init = init;
    setImmediate(() => this.send({ t: 'listening', port: init.port === 0 ? 4321 : init.port }));
  }
  send(message: WorkerMessage): void {
    this.emit('message', [message]);
  }
  postMessage(batch: readonly OwnerMessage[]): void {
    this.received.push(...batch);
    if (batch.some((m) => m.t === 'drain')) setImmediate(() => this.send({ t: 'drained' }));
  }
  crash(code = 1): void {
    this.emit('exit', code);
  }
  terminate(): Promise<number> {
    return Promise.resolve(0);
  }
}

async function startWith(mesh?: WorkersMeshSource) {
  const threads: FakeThread[] = [];
  const released: string[] = [];
  const { logger, lines } = capturedLogger('info');
  const scheduler = {
    routerRooms: () => [],
    admit: (): Promise<Admission> =>
      Promise.resolve({
        kind: 'admitted',
        node: VIEWS[0] as NodeView,
        route: { policy: 'p', reason: 'r' },
        waitedMs: 0,
        load: undefined,
        release: () => released.push('lease'),
      }),
  };
  const workers = await RequestWorkers.start({
    count: 2,
    clock: new ManualClock(),
    logger,
    config: () => CONFIG,
    registry: { views: () => VIEWS },
    reports: {
      learnContext: () => {},
      learnTokenRatio: () => {},
      learnDecodeRate: () => {},
      modelVanished: () => {},
      learnLackingEndpoint: () => {},
    },
    scheduler,
    // The owner sides the feature list gives (gateway/features.ts): the tenants' always, the mesh's with [mesh].
    features: [tenantsOwnerSide(new TenantLedger(() => 0)), ...(mesh === undefined ? [] : [meshOwnerSide(mesh)])],
    events: new EventBus<ProxyEvents>(),
    modelLabel: (m) => m,
    relay: { url: 'http://127.0.0.1:1', secret: 's' },
    relayed: [],
    guard: () => Promise.resolve({ close: () => Promise.resolve() }),
    spawn: (init) => {
      const thread = new FakeThread(init);
      threads.push(thread);
      return thread as unknown as WorkerThread;
    },
  });
  return { workers, threads, released, lines };
}

/** The mesh's messages among what a worker received (carried under the mesh's name). */
const meshMessages = (thread: FakeThread | undefined): MeshOwnerMessage[] =>
  (thread?.received ?? []).flatMap((m) => (m.t === 'feature' && m.name === 'mesh' ? [m.message as MeshOwnerMessage] : []));
/** What a worker's mesh side starts with (undefined: none is started). */
const meshInit = (thread: FakeThread | undefined): MeshInit | undefined => thread?.init.features['mesh'] as MeshInit | undefined;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the first worker binds the port, the others join it', async () => {
  const { workers, threads } = await startWith();
  assert.equal(workers.port, 4321);
  assert.deepEqual(
    threads.map((t) => [t.init.index, t.init.port]),
    [
      [0, 0],
      [1, 4321],
    ],
  );
});

test('a worker that exits gives its leases back and is started again on the same port', async () => {
  const { workers, threads, released, lines } = await startWith();
  threads[1]?.send({ t: 'admit', id: 1, req: REQ, settings: SETTINGS, firstAttempt: true });
  await turn();
  await turn();
  assert.deepEqual(
    workers.status().map((s) => s.leases_held),
    [0, 1],
  );
  threads[1]?.crash();
  assert.deepEqual(released, ['lease']);
  assert.equal(threads.length, 3);
  assert.deepEqual([threads[2]?.init.index, threads[2]?.init.port], [1, 4321]);
  assert.ok(lines.some((l) => l.msg === 'a request worker exited; its leases were returned; starting it again'));
  assert.deepEqual(
    workers.status().map((s) => [s.worker, s.leases_held]),
    [
      [0, 0],
      [1, 0],
    ],
  );
});

test(`a worker that keeps exiting is restarted at most ${MAX_RESTARTS} times a minute`, async () => {
  const { threads, lines } = await startWith();
  for (let i = 0; i < MAX_RESTARTS + 2; i += 1) threads.at(-1)?.crash();
  assert.equal(threads.length, 2 + MAX_RESTARTS);
  assert.ok(lines.some((l) => String(l.msg).includes('too many restarts, it stays down')));
});

test('a drain tells every worker and waits until each has drained; exits then are not restarted', async () => {
  const { workers, threads } = await startWith();
  await workers.drain();
  for (const thread of threads) assert.ok(thread.received.some((m) => m.t === 'drain'));
  threads[0]?.crash(0);
  assert.equal(threads.length, 2);
});

test('without [mesh] the workers start with no mesh state and are sent none', async () => {
  const { workers, threads } = await startWith();
  workers.syncFeatures();
  await turn();
  assert.deepEqual(
    threads.map((t) => meshInit(t)),
    [undefined, undefined],
  );
  assert.ok(threads.every((t) => meshMessages(t).length === 0));
});

test('with [mesh] the workers get the site key once loaded and the remote sites whenever their views change', async () => {
  const state: { key: SiteKey | undefined; sites: RemoteSiteView[] } = { key: undefined, sites: [] };
  const { workers, threads } = await startWith({
    key: () => state.key,
    sites: () => state.sites,
    claimForward: () => ({ ok: true }),
  });
  assert.deepEqual(
    threads.map((t) => meshInit(t)),
    [
      { keyPem: undefined, sites: [] },
      { keyPem: undefined, sites: [] },
    ],
  );
  const pushed = (thread: FakeThread | undefined, t: 'sites' | 'site-key') => meshMessages(thread).filter((m) => m.t === t);
  workers.syncFeatures();
  await turn();
  assert.deepEqual(pushed(threads[0], 'sites'), [], 'nothing changed: nothing sent');

  const key = testSiteKey();
  const c: RemoteSiteView = {
    id: 'c',
    url: 'http://127.0.0.1:2',
    fresh: true,
    load: 0.5,
    models: new Map([['m-c', { ctx: 8192, onDemand: false }]]),
  };
  state.key = key;
  state.sites = [c];
  workers.syncFeatures();
  workers.syncFeatures();
  await turn();
  for (const thread of threads) {
    const keys = pushed(thread, 'site-key');
    assert.equal(keys.length, 1, 'the key is sent once');
    assert.match(keys[0]?.t === 'site-key' ? keys[0].pem : '', /-----BEGIN PRIVATE KEY-----/);
    const sites = pushed(thread, 'sites');
    assert.equal(sites.length, 1, 'an unchanged view is not sent again');
    assert.deepEqual(sites[0]?.t === 'sites' ? sitesFromWire(sites[0].sites) : undefined, [c]);
  }

  // A fresh array with the same content is no change; a site going stale is.
  state.sites = [{ ...c, models: new Map(c.models) }];
  workers.syncFeatures();
  state.sites = [{ ...c, fresh: false }];
  workers.syncFeatures();
  await turn();
  const last = pushed(threads[1], 'sites');
  assert.equal(last.length, 2);
  assert.equal(last[1]?.t === 'sites' ? last[1].sites[0]?.fresh : undefined, false);

  // A restarted worker starts from what was last pushed.
  threads[0]?.crash();
  const restarted = meshInit(threads.at(-1));
  assert.match(restarted?.keyPem ?? '', /-----BEGIN PRIVATE KEY-----/);
  assert.deepEqual(sitesFromWire(restarted?.sites ?? []), [{ ...c, fresh: false }]);
});
