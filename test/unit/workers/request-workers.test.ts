// The owner's management of its workers, with stand-in threads: a worker that ends unexpectedly
// gives back every lease it held and is started again on the same port, within a restart budget;
// a drain waits for every worker to say it drained.
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
import { capturedLogger } from '#test/fixtures/captured-logs.ts';

const CONFIG = { server: { listen: { host: '127.0.0.1', port: 0 } }, upstream: { maxConnections: 8 } } as unknown as GatewayConfig;
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

async function startWith() {
  const threads: FakeThread[] = [];
  const released: string[] = [];
  const { logger, lines } = capturedLogger('info');
  const scheduler = {
    admit: (): Promise<Admission> =>
      Promise.resolve({
        kind: 'admitted', node: VIEWS[0] as NodeView, route: { policy: 'p', reason: 'r' }, waitedMs: 0, load: undefined,
        release: () => released.push('lease'),
      }),
  };
  const workers = await RequestWorkers.start({
    count: 2,
    clock: new ManualClock(),
    logger,
    config: () => CONFIG,
    registry: { views: () => VIEWS, learnContext: () => {} },
    scheduler,
    events: new EventBus<ProxyEvents>(),
    modelLabel: (m) => m,
    onModelVanished: () => {},
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

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('the first worker binds the port, the others join it', async () => {
  const { workers, threads } = await startWith();
  assert.equal(workers.port, 4321);
  assert.deepEqual(threads.map((t) => [t.init.index, t.init.port]), [[0, 0], [1, 4321]]);
});

test('a worker that exits gives its leases back and is started again on the same port', async () => {
  const { workers, threads, released, lines } = await startWith();
  threads[1]?.send({ t: 'admit', id: 1, req: REQ, settings: SETTINGS, firstAttempt: true });
  await turn();
  await turn();
  assert.deepEqual(workers.status().map((s) => s.leases_held), [0, 1]);
  threads[1]?.crash();
  assert.deepEqual(released, ['lease']);
  assert.equal(threads.length, 3);
  assert.deepEqual([threads[2]?.init.index, threads[2]?.init.port], [1, 4321]);
  assert.ok(lines.some((l) => l.msg === 'a request worker exited; its leases were returned; starting it again'));
  assert.deepEqual(workers.status().map((s) => [s.worker, s.leases_held]), [[0, 0], [1, 0]]);
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
