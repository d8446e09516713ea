// UpstreamPools on reload: pools close for removed and moved nodes, and all of them for a change of
// the settings a pool is built from; other upstream settings leave open connections alone.
//
// The connection pool's bounded wait: with every connection in use a request waits in the gate's
// FIFO, gets the next free connection, or fails as a connect timeout after connection_wait. Time is
// a ManualClock, so no outcome depends on machine speed. The gate is an interceptor composed onto
// the pool: requests go through `dispatcher`, the gate's figures come from `gate`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { diffNodes, type UpstreamConfig } from '#src/config/index.ts';
import { ManualClock } from '#src/core/clock.ts';
import { UpstreamPools } from '#src/proxy/index.ts';
import { gatedPool, type GatedPool } from '#src/proxy/attempt/upstream-pools.ts';
import { spec } from '#test/fixtures/builders.ts';
import { onEmitter, untilEvent } from '#test/fixtures/events.ts';
// The gate's tests call `dispatcher.request`, which undici's main entry adds to its dispatchers (the
// gateway loads only the parts it uses: core/undici-parts.ts).
import 'undici';

const settings = CONFIG_DEFAULTS.upstream;

test("a node's pool comes with its origin, which each call names (undici copies options that name none)", async (t) => {
  const pools = new UpstreamPools(settings, { clock: new ManualClock() });
  t.after(() => pools.close());
  const node = spec('a', { url: 'http://127.0.0.1:9/v1-prefix' });
  const target = pools.dispatchTo(node);
  assert.equal(target.origin, 'http://127.0.0.1:9');
  assert.equal(target.dispatcher, pools.get(node), 'the same pool as get gives');
  assert.equal(pools.dispatchTo(node), target, 'one object per pool, not one per call');
});

test('a reload closes the pools of removed and moved nodes and keeps the rest', async (t) => {
  const pools = new UpstreamPools(settings, { clock: new ManualClock() });
  t.after(() => pools.close());
  const before = [spec('kept'), spec('relisted'), spec('moved'), spec('gone')];
  const kept = pools.get(spec('kept'));
  for (const node of before.slice(1)) pools.get(node);
  const keptNext = spec('kept', { group: 'g' });
  const after = [keptNext, spec('relisted', { apiKey: 'sk-new' }), spec('moved', { url: 'http://127.0.0.1:2/moved' })];
  const perRequestOnly: UpstreamConfig = { ...settings, maxHeldBodyBytes: settings.maxHeldBodyBytes + 1, ejectForMs: 1 };
  pools.applyChange(diffNodes(before, after), perRequestOnly);
  assert.deepEqual(Object.keys(pools.stats()), ['kept', 'relisted']);
  assert.equal(pools.get(keptNext), kept, 'the same pool, its connections kept');
});

test('a reload that changes a pool setting closes every pool', async (t) => {
  const pools = new UpstreamPools(settings, { clock: new ManualClock() });
  t.after(() => pools.close());
  const nodes = [spec('a'), spec('b')];
  for (const node of nodes) pools.get(node);
  pools.applyChange(diffNodes(nodes, nodes), { ...settings, connectTimeoutMs: settings.connectTimeoutMs + 1 });
  assert.deepEqual(pools.stats(), {});
});

let server: Server;
let origin: string;
/** Responses the server holds until the test releases them. */
const held: ServerResponse[] = [];

before(async () => {
  server = createServer((_req, res) => void held.push(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const res of held.splice(0)) res.end();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function gated(clock: ManualClock, timeouts: string[]): GatedPool {
  return gatedPool(origin, { pipelining: 1 }, { limit: 1, waitMs: 5_000, clock, onWaitTimeout: () => timeouts.push('timeout') });
}

async function answerNext(): Promise<void> {
  // The server's `request` listener after its own handler: `held` has the request when it fires.
  await untilEvent(() => held.length > 0, [onEmitter(server, 'the server', 'request')], 'a request at the server');
  held.shift()?.end('ok');
}

test('a request that finds every connection in use fails as a connect timeout after connection_wait', async () => {
  const clock = new ManualClock();
  const timeouts: string[] = [];
  const { dispatcher, gate, pool } = gated(clock, timeouts);
  try {
    const first = dispatcher.request({ path: '/', method: 'GET' });
    const second = dispatcher.request({ path: '/', method: 'GET' });
    second.catch(() => {});
    assert.deepEqual(gate.stats(), { limit: 1, running: 1, waiting: 1 });
    clock.advance(4_999);
    assert.equal(gate.stats().waiting, 1, 'still waiting before connection_wait');
    clock.advance(1);
    await assert.rejects(second, (error: { code?: string; message?: string }) => {
      assert.equal(error.code, 'UND_ERR_CONNECT_TIMEOUT');
      assert.match(String(error.message), /all 1 in use \(upstream\.max_connections\)/);
      return true;
    });
    assert.deepEqual(timeouts, ['timeout']);
    assert.equal(gate.stats().waiting, 0);
    await answerNext();
    assert.equal(await (await first).body.text(), 'ok');
  } finally {
    await pool.destroy();
  }
});

test('a waiting request takes the connection the running one frees, in arrival order', async () => {
  const clock = new ManualClock();
  const timeouts: string[] = [];
  const { dispatcher, gate, pool } = gated(clock, timeouts);
  try {
    const first = dispatcher.request({ path: '/1', method: 'GET' });
    const second = dispatcher.request({ path: '/2', method: 'GET' });
    await answerNext();
    assert.equal(await (await first).body.text(), 'ok');
    await answerNext();
    assert.equal(await (await second).body.text(), 'ok');
    clock.advance(10_000);
    assert.deepEqual(timeouts, [], "the admitted request's wait timer was cancelled");
    assert.deepEqual(gate.stats(), { limit: 1, running: 0, waiting: 0 });
  } finally {
    await pool.destroy();
  }
});

test("the caller's abort takes a waiting request out at once; abandonWaiting fails the rest", async () => {
  const clock = new ManualClock();
  const { dispatcher, gate, pool } = gated(clock, []);
  try {
    const first = dispatcher.request({ path: '/', method: 'GET' });
    const controller = new AbortController();
    const aborted = dispatcher.request({ path: '/', method: 'GET', signal: controller.signal });
    const abandoned = dispatcher.request({ path: '/', method: 'GET' });
    controller.abort(new Error('client left'));
    await assert.rejects(aborted, /client left/);
    assert.equal(gate.stats().waiting, 1);
    gate.abandonWaiting(new Error('node reconfigured'));
    await assert.rejects(abandoned, /node reconfigured/);
    assert.equal(gate.stats().waiting, 0);
    await answerNext();
    assert.equal(await (await first).body.text(), 'ok');
  } finally {
    await pool.destroy();
  }
});
