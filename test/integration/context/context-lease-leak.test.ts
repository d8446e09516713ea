// Leases always come back: 1,000 mixed requests (streaming and not, four models on four nodes, more
// than the slots can take so many wait in queues) with seeded random client aborts at random points
// (before an answer, on the headers, mid-stream, on a timer). Afterwards /admin/hosts shows no
// lease and nothing in flight, every queue is empty, the lease and queue gauges are all zero, and
// the gateway still serves every model. The same run again with `[server] workers = 2`: the leases
// live in the main thread and two request threads admit through it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, simStats } from '#test/fixtures/http.ts';
import { metric, metricsText } from '#test/fixtures/gateway-state.ts';
import { chatOfTokens, hostsOf, metricSamples, mulberry32, waitForHost } from '#test/fixtures/context.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const FLEET = `
[[node]]
name = "l1"
kind = "llamacpp"
models = ["m-a"]
slots = 4
context = 4096
ttft = "1ms"
tokens_per_second = 2000

[[node]]
name = "l2"
kind = "llamacpp"
models = ["m-a"]
slots = 2
context = 4096
ttft = "1ms"
tokens_per_second = 2000

[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "1ms"
tokens_per_second = 2000

[[node.model]]
id = "m-b"
status = "loaded"
slots = 2
context = 4096

[[node.model]]
id = "m-c"
status = "loaded"
slots = 1
context = 4096

[[node]]
name = "vllm"
kind = "vllm"
models = ["m-d"]
slots = 4
ttft = "1ms"
tokens_per_second = 2000
`;

const MODELS = ['m-a', 'm-b', 'm-c', 'm-d'];
const TOTAL = 1000;
const CONCURRENCY = 32;

type AbortPoint = 'none' | 'at_once' | 'on_headers' | 'mid_stream' | 'timer';

/** One request, maybe abandoned at `point`; resolves with the status seen (0 when aborted first). */
async function oneRequest(gw: GatewayUnderTest, random: () => number): Promise<{ status: number; aborted: boolean }> {
  const model = MODELS[Math.floor(random() * MODELS.length)] ?? 'm-a';
  const stream = random() < 0.5;
  const roll = random();
  const point: AbortPoint =
    roll < 0.6 ? 'none' : roll < 0.68 ? 'at_once' : roll < 0.76 ? 'on_headers' : roll < 0.88 ? 'mid_stream' : 'timer';
  const timerMs = Math.floor(random() * 15);
  const body = chatOfTokens(model, 1 + Math.floor(random() * 20), { max_tokens: 2 + Math.floor(random() * 10), stream });
  const controller = new AbortController();
  const deadline = AbortSignal.timeout(60_000);
  const signal = AbortSignal.any([controller.signal, deadline]);
  if (point === 'at_once') setImmediate(() => controller.abort());
  if (point === 'timer') setTimeout(() => controller.abort(), timerMs);
  try {
    const res = await request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    if (point === 'on_headers') controller.abort();
    let chunks = 0;
    for await (const _chunk of res.body) {
      chunks += 1;
      if (point === 'mid_stream' && chunks === 1) controller.abort();
    }
    return { status: res.statusCode, aborted: false };
  } catch (error) {
    if (deadline.aborted) throw new Error('a request hung past 60 s', { cause: error });
    if (!controller.signal.aborted) throw error;
    return { status: 0, aborted: true };
  }
}

for (const workers of [1, 2]) {
  describe(`with ${workers} worker(s)`, () => {
    let sim: SimFleet;
    let gw: GatewayUnderTest;

    before(async () => {
      sim = await startSimFleet(FLEET);
      gw = await startGateway(
        gatewayToml(
          sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind === 'vllm' ? 'vllm' : 'llamacpp' })),
          '',
          `workers = ${workers}`,
        ),
      );
      await waitForHost(gw, 'l1', (h) => h.models?.['m-a']?.slots === 4, 'slots known');
      await waitForHost(gw, 'l2', (h) => h.models?.['m-a']?.slots === 2, 'slots known');
      await waitForHost(gw, 'router', (h) => h.models?.['m-b']?.slots === 2 && h.models['m-c']?.slots === 1, 'slots known');
      await waitForHost(gw, 'vllm', (h) => h.loaded.includes('m-d'), 'listed');
    });

    after(async () => {
      await gw?.close();
      await sim?.close();
    });

    test('after 1,000 mixed requests with random client aborts, every lease and queue slot is returned', async () => {
      const random = mulberry32(20_240_601);
      let next = 0;
      const statuses = new Map<number, number>();
      let aborted = 0;
      const worker = async (): Promise<void> => {
        while (next < TOTAL) {
          next += 1;
          const outcome = await oneRequest(gw, random);
          if (outcome.aborted) aborted += 1;
          else statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));

      assert.ok(aborted > 100, `clients aborted (${aborted})`);
      assert.deepEqual([...statuses.keys()], [200], `every answered request succeeded: ${JSON.stringify([...statuses])}`);
      const waited = await Promise.all(
        MODELS.map((model) => metric(gw.url, 'gateway_queue_wait_seconds_count', { model, outcome: 'admitted' })),
      );
      assert.ok(
        waited.some((n) => n > 0),
        'some requests waited in a queue',
      );

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
      const text = await metricsText(gw.url);
      for (const name of ['gateway_leases_in_flight', 'gateway_queue_depth']) {
        const held = metricSamples(text, name).filter((s) => s.value !== 0);
        assert.deepEqual(held, [], `${name} is zero everywhere`);
      }
      for (const node of sim.nodes) {
        await untilEvent(
          async () => (await simStats(node.url)).inFlight === 0,
          [{ label: `${node.name}'s activity`, subscribe: node.onActivity }],
          `${node.name} idle`,
        );
      }

      for (const model of MODELS) {
        const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, chatOfTokens(model, 3, { max_tokens: 2 }));
        assert.equal(res.status, 200, `${model} still served: ${res.text}`);
      }
    });
  });
}
