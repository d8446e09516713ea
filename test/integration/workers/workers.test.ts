// `[server] workers = 2`: two request threads on one listener, every lease and queue in the main
// thread. Requests go out on fresh connections so the kernel spreads them over both workers; each
// test checks (through /admin/runtime) that both did take part, so none can pass on one worker.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { eventually, httpJson, simRequests } from '#test/fixtures/http.ts';
import { postFresh, type Answer } from '#test/fixtures/fresh-connection.ts';
import { metric } from '#test/fixtures/gateway-state.ts';
import {
  chatOfTokens,
  hostsOf,
  startListingFront,
  TINY_AND_ROOMY_FLEET,
  unusedPort,
  waitForHost,
  type ListingFront,
} from '#test/fixtures/context.ts';
import { startSlotCountingNode, type SlotCountingNode } from '#test/fixtures/slot-counting-node.ts';
import { userChat } from '#test/fixtures/slot-replicas.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const chat = userChat;

interface WorkerRow {
  readonly worker: number;
  readonly admitted: number;
  readonly leases_held: number;
}

async function workerRows(gw: GatewayUnderTest): Promise<WorkerRow[]> {
  const res = await httpJson('GET', `${gw.url}/admin/runtime`);
  assert.equal(res.status, 200, res.text);
  return (JSON.parse(res.text) as { workers: WorkerRow[] }).workers;
}

async function assertBothWorkersAdmitted(gw: GatewayUnderTest): Promise<void> {
  const rows = await workerRows(gw);
  assert.equal(rows.length, 2);
  for (const row of rows) assert.ok(row.admitted > 0, `worker ${row.worker} admitted requests: ${JSON.stringify(rows)}`);
}

async function assertNothingHeld(gw: GatewayUnderTest): Promise<void> {
  await untilEvent(
    async () => {
      const { hosts, queue_depth } = await hostsOf(gw.url);
      return (
        hosts.every((h) => h.in_flight === 0 && Object.keys(h.leases).length === 0) &&
        Object.values(queue_depth).every((d) => d === 0)
      );
    },
    [requestEnds(gw), nodeChanges(gw)],
    'no lease, nothing in flight, empty queues',
  );
  assert.ok((await workerRows(gw)).every((row) => row.leases_held === 0));
}

describe('a burst of 200 requests on a node with 4 slots', () => {
  const SLOTS = 4;
  let node: SlotCountingNode;
  let gw: GatewayUnderTest;
  before(async () => {
    node = await startSlotCountingNode({ slots: SLOTS, holdMs: 15 });
    gw = await startGateway(
      gatewayToml(
        [{ name: 'n', url: node.url, kind: 'llamacpp' }],
        '[routing]\nmax_queue = 1000\nqueue_timeout = "60s"',
        'workers = 2',
      ),
    );
    await waitForHost(gw, 'n', (h) => h.models?.m?.slots === SLOTS, 'slots known');
  });
  after(async () => {
    await gw?.close();
    await node?.close();
  });

  test('all succeed, and the node never has more than its slots at once (no over-admission across workers)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => postFresh(`${gw.url}/v1/chat/completions`, chat(`u${i}`))),
    );
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    assert.equal(node.seen.served, 200);
    assert.equal(
      node.seen.peak,
      SLOTS,
      `the node had at most ${SLOTS} at once, and the burst did fill it (peak ${node.seen.peak})`,
    );
    await assertBothWorkersAdmitted(gw);
    await assertNothingHeld(gw);
    // /metrics is aggregated over the workers: every request counted once.
    assert.equal(await metric(gw.url, 'gateway_requests_total', { model: 'm', node: 'n', status: '200' }), 200);
  });
});

describe('one slot, requests arriving through both workers', () => {
  let node: SlotCountingNode;
  let gw: GatewayUnderTest;
  before(async () => {
    node = await startSlotCountingNode({ slots: 1, holdMs: 1 });
    gw = await startGateway(
      gatewayToml(
        [{ name: 'n', url: node.url, kind: 'llamacpp' }],
        '[routing]\nmax_queue = 16\nqueue_timeout = "60s"',
        'workers = 2',
      ),
    );
    await waitForHost(gw, 'n', (h) => h.models?.m?.slots === 1, 'slots known');
  });
  after(async () => {
    await gw?.close();
    await node?.close();
  });

  const queueDepth = async (): Promise<number> => (await hostsOf(gw.url)).queue_depth.m ?? 0;

  test('are served in the order they arrived (FIFO per model across workers)', async () => {
    node.pause();
    const sent: Promise<Answer>[] = [postFresh(`${gw.url}/v1/chat/completions`, chat('r0'))];
    await untilEvent(() => node.seen.running === 1, [node.changes], 'r0 holds the slot');
    // Each request is sent only once the one before it is queued: the arrival order is known.
    for (let i = 1; i <= 16; i += 1) {
      sent.push(postFresh(`${gw.url}/v1/chat/completions`, chat(`r${i}`)));
      await eventually(async () => (await queueDepth()) === i, 5_000, `r${i} queued`);
    }
    // The queue is full: one more is refused with 429, as with one worker.
    const refused = await postFresh(`${gw.url}/v1/chat/completions`, chat('r17'));
    assert.equal(refused.status, 429, refused.text);
    assert.match(refused.text, /queue/);
    node.resume();
    const answers = await Promise.all(sent);
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(17).fill(200),
    );
    assert.deepEqual(
      node.seen.order,
      Array.from({ length: 17 }, (_, i) => `r${i}`),
    );
    await assertBothWorkersAdmitted(gw);
    await assertNothingHeld(gw);
  });
});

describe('admin, reload and the dashboard feed through the workers', () => {
  let node: SlotCountingNode;
  let gw: GatewayUnderTest;
  const config = (extraServer: string): string =>
    gatewayToml([{ name: 'n', url: node.url, kind: 'llamacpp' }], '', `workers = 2\n${extraServer}`);
  before(async () => {
    node = await startSlotCountingNode({ slots: 4, holdMs: 1 });
    gw = await startGateway(config(''));
    await waitForHost(gw, 'n', (h) => h.models?.m?.slots === 4, 'slots known');
  });
  after(async () => {
    await gw?.close();
    await node?.close();
  });

  test('an admin change from loopback is taken; the same through a proxy (X-Forwarded-For) is refused', async () => {
    const local = await postFresh(`${gw.url}/admin/reload`, {});
    assert.equal(local.status, 200, local.text);
    const proxied = await postFresh(`${gw.url}/admin/reload`, {}, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(proxied.status, 403, proxied.text);
    assert.match(proxied.text, /through a proxy/);
  });

  test('a reload through POST /admin/reload applies to every worker at once', async () => {
    await writeFile(gw.configPath, config('api_keys = ["k-1"]'));
    const reloaded = await postFresh(`${gw.url}/admin/reload`, {});
    assert.equal(reloaded.status, 200, reloaded.text);
    const without = await Promise.all(
      Array.from({ length: 16 }, (_, i) => postFresh(`${gw.url}/v1/chat/completions`, chat(`x${i}`))),
    );
    assert.deepEqual([...new Set(without.map((a) => a.status))], [401]);
    const withKey = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        postFresh(`${gw.url}/v1/chat/completions`, chat(`k${i}`), { authorization: 'Bearer k-1' }),
      ),
    );
    assert.deepEqual([...new Set(withKey.map((a) => a.status))], [200]);
    await assertBothWorkersAdmitted(gw);
  });

  test('the dashboard live feed streams through a worker', async () => {
    const controller = new AbortController();
    const res = await request(`${gw.url}/admin/events`, { signal: controller.signal });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/event-stream/);
    const first = await res.body[Symbol.asyncIterator]().next();
    assert.ok(first.done !== true && String(first.value).length > 0, 'a first event');
    controller.abort();
  });
});

describe('with [admin] listen set', () => {
  let node: SlotCountingNode;
  let gw: GatewayUnderTest;
  before(async () => {
    node = await startSlotCountingNode({ slots: 2, holdMs: 1 });
    const adminPort = await unusedPort();
    gw = await startGateway(
      gatewayToml([{ name: 'n', url: node.url, kind: 'llamacpp' }], `[admin]\nlisten = "127.0.0.1:${adminPort}"`, 'workers = 2'),
    );
  });
  after(async () => {
    await gw?.close();
    await node?.close();
  });

  test('the owner serves the admin listener itself, and the workers answer 404 for admin paths', async () => {
    assert.ok(gw.adminUrl !== undefined);
    const runtime = await httpJson('GET', `${gw.adminUrl}/admin/runtime`);
    assert.equal(runtime.status, 200, runtime.text);
    assert.equal((runtime.json() as { workers: unknown[] }).workers.length, 2);
    const onMain = await httpJson('GET', `${gw.url}/admin/runtime`);
    assert.equal(onMain.status, 404);
    const health = await httpJson('GET', `${gw.url}/health`);
    assert.deepEqual(Object.keys(health.json() as object), ['status'], 'the main listener gives the status only');
  });
});

// "Nothing running": a thread, listener or timer left behind would keep this file's process from ending.
test('workers that cannot listen (the port is taken) fail the start with the reason, leaving nothing running', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  try {
    const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9', kind: 'llamacpp' }], '', 'workers = 2').replace(
      '127.0.0.1:0',
      `127.0.0.1:${port}`,
    );
    await assert.rejects(startGateway(toml), /request worker 0 could not listen: .*EADDRINUSE/);
  } finally {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  }
});

test('a second gateway with workers on the same address is refused instead of sharing the port', async () => {
  const port = await unusedPort();
  const toml = gatewayToml([{ name: 'n', url: 'http://127.0.0.1:9', kind: 'llamacpp' }], '', 'workers = 2').replace(
    '127.0.0.1:0',
    `127.0.0.1:${port}`,
  );
  const first = await startGateway(toml);
  try {
    await assert.rejects(
      startGateway(toml),
      /another Switchyard gateway with \[server\] workers already listens on 127\.0\.0\.1:\d+/,
    );
    // The first one still answers (its node is down: 503, with the fleet status).
    const health = await httpJson('GET', `${first.url}/health`);
    assert.ok([200, 503].includes(health.status), health.text);
  } finally {
    await first.close();
  }
  // Once it has stopped, the address is free again.
  const again = await startGateway(toml);
  await again.close();
});

describe('what a worker learns from a node reaches the owner', () => {
  const LONG = 3000;
  const FLEET = TINY_AND_ROOMY_FLEET;
  let sim: SimFleet;
  let front: ListingFront;
  let gw: GatewayUnderTest;
  const tinyPosts = async (): Promise<number> =>
    (await simRequests(sim.url('tiny'))).filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions').length;

  before(async () => {
    sim = await startSimFleet(FLEET);
    // tiny's context is hidden behind a listing front (kind "openai"): only its refusal can tell it.
    front = await startListingFront(sim.url('tiny'));
    const nodes = [
      { name: 'tiny', url: front.url, kind: 'openai' },
      { name: 'roomy', url: sim.url('roomy'), kind: 'llamacpp' },
    ];
    gw = await startGateway(gatewayToml(nodes, '', 'workers = 2'));
    await waitForHost(gw, 'roomy', (h) => h.models?.ovf?.n_ctx === 16384, 'context known');
    await waitForHost(gw, 'tiny', (h) => h.discovery.state === 'known', 'listed');
  });
  after(async () => {
    await gw?.close();
    await front?.close();
    await sim?.close();
  });

  test('an overflow refusal fails over to the node that fits, and the learned context keeps later long prompts off the small node', async () => {
    for (let i = 0; i < 6 && (await tinyPosts()) === 0; i += 1) {
      const res = await postFresh(`${gw.url}/v1/chat/completions`, chatOfTokens('ovf', LONG, { max_tokens: 4 }));
      assert.equal(res.status, 200, res.text);
    }
    assert.equal(await tinyPosts(), 1, 'the small node was tried once');
    // The worker that met the refusal told the owner, whose registry now holds tiny's context.
    await waitForHost(gw, 'tiny', (h) => h.models?.ovf?.n_ctx === 1024, 'learned context');
    const later = await Promise.all(
      Array.from({ length: 8 }, () => postFresh(`${gw.url}/v1/chat/completions`, chatOfTokens('ovf', LONG, { max_tokens: 4 }))),
    );
    assert.deepEqual([...new Set(later.map((a) => a.status))], [200]);
    assert.equal(await tinyPosts(), 1, 'no worker sent a long prompt to the small node again');
  });
});
