// Issue 23, "every limit exact with workers = 2", across a reload. A worker that believes a tenant
// unlimited admits its requests without waiting for the owner (the ledger only counts them). On
// the base commit the owner's ledger took a reload's new limits before the workers had even been
// sent the new config, so a worker still on the old config admitted requests of a tenant that had
// just gained a limit, past it. Now the config is pushed with a generation, each worker confirms
// it (`config-applied`), and the reload hands the ledger its new limits only once every worker
// confirmed (or ended, or a bound passed): from then on every worker asks the owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { TenantLedger, tenantsOwnerSide } from '#src/tenants/index.ts';
import { RequestWorkers } from '#src/workers/request-workers.ts';
import type { OwnerMessage, WorkerInit, WorkerMessage } from '#src/workers/protocol.ts';
import type { WorkerThread } from '#src/workers/worker-link.ts';
import { capturedLogger } from '#test/fixtures/captured-logs.ts';

/** request-workers.ts CONFIG_ACK_BOUND_MS: how long a reload waits for a worker's confirmation. */
const ACK_BOUND_MS = 5_000;
const CONFIG = {
  server: { listen: { host: '127.0.0.1', port: 0 } },
  upstream: { maxConnections: 8 },
} as unknown as GatewayConfig;

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
  }
  terminate(): Promise<number> {
    return Promise.resolve(0);
  }
}

async function startTwo() {
  const threads: FakeThread[] = [];
  const clock = new ManualClock();
  const { logger, lines } = capturedLogger('info');
  const holder = { config: CONFIG };
  const workers = await RequestWorkers.start({
    count: 2,
    clock,
    logger,
    config: () => holder.config,
    registry: { views: () => [] as NodeView[] },
    reports: {
      learnContext: () => {},
      learnTokenRatio: () => {},
      learnDecodeRate: () => {},
      modelVanished: () => {},
      learnLackingEndpoint: () => {},
    },
    scheduler: { routerRooms: () => [], admit: () => Promise.reject(new Error('not used')) },
    features: [tenantsOwnerSide(new TenantLedger(() => 0))],
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
  return {
    workers,
    threads,
    clock,
    lines,
    reload: () => {
      holder.config = { ...CONFIG };
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const configsOf = (thread: FakeThread | undefined) =>
  (thread?.received ?? []).filter((m) => m.t === 'config').map((m) => (m.t === 'config' ? m.generation : -1));

test('a reload is followed once every worker confirmed the config it was pushed', async () => {
  const { workers, threads, reload } = await startTwo();
  reload();
  let followed = false;
  const following = workers.syncConfig().then(() => {
    followed = true;
  });
  await turn();
  assert.deepEqual([configsOf(threads[0]), configsOf(threads[1])], [[1], [1]], 'each worker was pushed generation 1');
  assert.equal(followed, false, 'no worker confirmed yet');
  threads[0]?.send({ t: 'config-applied', generation: 1 });
  await turn();
  assert.equal(followed, false, 'one worker still on the old config');
  threads[1]?.send({ t: 'config-applied', generation: 1 });
  await following;
  assert.equal(followed, true);
  // Nothing changed: nothing to wait for.
  await workers.syncConfig();
});

test('a worker that ends is not waited for; one that never confirms is waited for a bounded time, and named', async () => {
  const { workers, threads, clock, lines, reload } = await startTwo();
  reload();
  const first = workers.syncConfig();
  threads[0]?.send({ t: 'config-applied', generation: 1 });
  threads[1]?.emit('exit', 1);
  await first;

  reload();
  let followed = false;
  const second = workers.syncConfig().then(() => {
    followed = true;
  });
  threads[0]?.send({ t: 'config-applied', generation: 2 });
  await turn();
  assert.equal(followed, false, 'the restarted worker has not confirmed');
  clock.advance(ACK_BOUND_MS);
  await second;
  const warned = lines.find(
    (l) => l.msg === 'request workers did not confirm the reloaded config in time; its tenant limits apply now',
  );
  assert.deepEqual(warned?.workers, [1]);
});
