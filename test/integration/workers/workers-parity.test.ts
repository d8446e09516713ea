// Issue 22: the same request gets the same answer with `[server] workers = 2` as with one thread.
// A vLLM node that fails (500) and a llama-server router at max_instances = 1 busy with another
// model: routing picks the vLLM node (the router has no room), it fails, and nowhere else can take
// the request at once — the router is full — so the node's 500 is passed on. Before the request
// worker judged failovers by the scheduler's pipeline (router-room included), two workers hid it,
// queued the request for the router and answered 429 queue_timeout when the queue time was up.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { httpJson } from '#test/fixtures/http.ts';

const FLEET = `
[[node]]
name = "v"
kind = "vllm"
models = ["m"]
ttft = "1ms"

[[node]]
name = "r"
kind = "llamacpp-router"
models_max = 1
ttft = "60s"

[[node.model]]
id = "x"
status = "loaded"

[[node.model]]
id = "m"
status = "unloaded"
`;

let sim: SimFleet;

before(async () => {
  sim = await startSimFleet(FLEET);
  sim.node('v').setFaults({ inference: 'error500' });
});

after(async () => {
  await sim?.close();
});

const chat = (model: string): Record<string, unknown> => ({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });

/** The answer to one request for m while the router is busy with x, through a gateway of `workers` threads. */
async function answerWith(workers: number): Promise<{ status: number; body: string }> {
  const config = gatewayToml(
    [
      { name: 'v', url: sim.url('v'), kind: 'vllm' },
      { name: 'r', url: sim.url('r'), kind: 'llamacpp' },
    ],
    // Short enough that a request wrongly queued for the router is refused within the test. The
    // gateway holds the router's switches (a full router is then no alternative): where the router
    // queues itself (issue 41, router_queue = "auto") it would take the request into its own queue.
    '[routing]\nqueue_timeout = "2s"\nrouter_queue = "gateway"',
    `workers = ${workers}`,
  );
  const gw = await startGateway(config);
  const busy = new AbortController();
  try {
    await waitForHost(gw, 'r', (h) => h.router?.max_instances === 1 && h.loaded.includes('x'), 'max_instances learned');
    await waitForHost(gw, 'v', (h) => h.loaded.includes('m'), 'v lists m');
    const held = request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chat('x')),
      headers: { 'content-type': 'application/json' },
      signal: busy.signal,
    }).catch(() => undefined);
    await waitForHost(gw, 'r', (h) => (h.leases.x?.requests ?? 0) === 1, 'x in flight on the router');
    const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chat('m'));
    busy.abort();
    await held;
    return { status: res.status, body: res.text };
  } finally {
    busy.abort();
    await gw.close();
  }
}

test("workers = 2 passes the failing node's 500 on, as one thread does, when the only other node is a full router", async () => {
  const one = await answerWith(1);
  assert.equal(one.status, 500, `one thread: ${one.body}`);
  const two = await answerWith(2);
  assert.deepEqual(two, one);
});
