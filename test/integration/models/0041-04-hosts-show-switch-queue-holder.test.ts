// Issue 41, item 3: /admin/hosts says, per llama-server router, who holds the requests that wait for
// its model switches — the router's own queue (build 10313 and later, one tenant, router_queue "auto")
// or the gateway's — with the scheduler's reason (scheduler/queue-holder.ts), read from the running
// gateway over the sim router. And /admin/models shows a load the router holds our requests for as
// that router's switch under way (by the router), with its queue, until the load answers.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { ManualClock } from '#src/core/clock.ts';
import { startRouterRig, routerLearned, type RouterModel, type RouterRig } from '#test/fixtures/router-fleet.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { advanceUntil } from '#test/fixtures/test-clocks.ts';

interface Host {
  readonly name: string;
  readonly server?: { readonly version: string | null } | null;
  readonly switch_queue?: { readonly holder: string; readonly reason: string };
}

const TWO_MODELS: readonly RouterModel[] = [
  ['model-a', 'loaded'],
  ['model-b', 'unloaded'],
];

let rig: RouterRig | undefined;

afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The router's hosts row once the gateway has read the build it states (the decision reads it). */
async function routerRow(on: RouterRig): Promise<Host> {
  let row: Host | undefined;
  await eventually(
    async () => {
      const hosts = (await httpJson('GET', `${on.gw.url}/admin/hosts`, undefined, on.adminHeaders)).json<{ hosts: Host[] }>();
      row = hosts.hosts.find((h) => h.name === 'router');
      return typeof row?.server?.version === 'string';
    },
    60_000,
    "the router's build learned",
  );
  assert.ok(row !== undefined);
  return row;
}

async function start(more: readonly string[], gateway: string): Promise<RouterRig> {
  return startRouterRig({ routers: [{ modelsMax: 1, more, models: TWO_MODELS }], gateway });
}

test('a router of a new build with one tenant holds its own switch queue, and /admin/hosts says so with the reason', async () => {
  rig = await start([], '[[tenants]]\nname = "solo"\nkeys = ["sk-solo-0123456789"]\n');
  const row = await routerRow(rig);
  assert.equal(row.switch_queue?.holder, 'router', JSON.stringify(row.switch_queue));
  assert.match(row.switch_queue?.reason ?? '', /queues per model itself .*the gateway does not hold its switches/);
});

test('router_queue = "gateway": /admin/hosts names the gateway, with the config key as the reason', async () => {
  rig = await start([], '[routing]\nrouter_queue = "gateway"\n');
  const row = await routerRow(rig);
  assert.deepEqual(row.switch_queue, { holder: 'gateway', reason: 'routing.router_queue = "gateway"' });
});

test('an old build (b10200): /admin/hosts names the gateway, because the build predates the router queue', async () => {
  rig = await start(['version = "b10200-0123abcd"'], '');
  const row = await routerRow(rig);
  assert.equal(row.server?.version, 'b10200-0123abcd');
  assert.deepEqual(row.switch_queue, { holder: 'gateway', reason: "its build b10200 predates the router's own queue (b10313)" });
});

interface ModelsNode {
  readonly name: string;
  readonly switch: { readonly action: string; readonly model: string; readonly by: string } | null;
  readonly router_queue: readonly { readonly model: string; readonly requests: number; readonly waited_ms: number }[];
}

test('/admin/models shows the load a router holds our requests for as its switch under way (by the router), until it answers', async () => {
  const clock = new ManualClock();
  rig = await startRouterRig({
    routers: [{ modelsMax: 1, loadTime: '1s', more: ['ttft = "10ms"', 'tokens_per_second = 1000'], models: TWO_MODELS }],
    learned: false,
    options: { clock },
  });
  const on = rig;
  let learned = false;
  void routerLearned(on.gw, { modelsMax: 1, loaded: ['model-a'] }).then(() => (learned = true));
  await advanceUntil(clock, () => learned, 'the router learned', { stepMs: 300 });
  await routerRow(on).then((row) => assert.equal(row.switch_queue?.holder, 'router'));
  const routerNode = async (): Promise<ModelsNode | undefined> =>
    (await httpJson('GET', `${on.gw.url}/admin/models`, undefined, on.adminHeaders))
      .json<{ nodes: ModelsNode[] }>()
      .nodes.find((n) => n.name === 'router');
  assert.equal((await routerNode())?.switch, null, 'no switch before the request');
  // On a failure the requests are aborted: the clock stands still, so nothing else would end them.
  const abort = new AbortController();
  const sends = [0, 1].map(() =>
    request(`${on.gw.url}/v1/chat/completions`, {
      method: 'POST',
      signal: abort.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'model-b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 }),
    }).then(async (res) => {
      await res.body.text();
      return res.statusCode;
    }),
  );
  for (const send of sends) send.catch(() => undefined);
  let answered = false;
  try {
    // The clock stands still: the router holds both requests for model-b's load.
    await eventually(
      async () => (await routerNode())?.router_queue[0]?.requests === 2,
      60_000,
      'two requests held by the router',
    );
    const during = await routerNode();
    assert.deepEqual(during?.switch, { action: 'load', model: 'model-b', by: 'router', loaded: false, victim: null });
    assert.deepEqual(
      during?.router_queue.map((q) => [q.model, q.requests]),
      [['model-b', 2]],
    );
    let statuses: number[] | undefined;
    void Promise.all(sends)
      .then((s) => (statuses = s))
      .catch(() => undefined);
    await advanceUntil(clock, () => statuses !== undefined, 'both answered', { stepMs: 100 });
    assert.deepEqual(statuses, [200, 200]);
    const after = await routerNode();
    assert.deepEqual([after?.switch, after?.router_queue], [null, []], 'the load answered: no switch under way');
    answered = true;
  } finally {
    abort.abort();
    // A failure left the router loading on a clock that stands still: let its time pass so the rig can close.
    for (let i = 0; !answered && i < 60; i++) {
      clock.advance(1_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
});
