// Issue 25: loading and unloading models through the admin API, in front of the simulated
// llama-server router and the simulated Ollama: the answers say what was done or why not, an
// unload never happens with a request in flight, and a load that fails backs off with its reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRouterRig, type RouterRig } from '#test/fixtures/router-fleet.ts';
import type { HostView } from '#test/fixtures/admin-readers.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges, requestEnds } from '#test/fixtures/gateway-waits.ts';

const TOKEN = 'models-admin-token-25';
const AUTH = { authorization: `Bearer ${TOKEN}` };

const OTHERS = `
[[node]]
name = "ollama"
kind = "ollama"
load_time = "30ms"

[[node.model]]
id = "qwen:7b"
status = "unloaded"

[[node]]
name = "vllm"
kind = "vllm"
models = ["fixed"]
`;

let rig: RouterRig;

before(async () => {
  rig = await startRouterRig({
    routers: [
      {
        more: ['ttft = "20ms"', 'tokens_per_second = 1000'],
        models: [
          ['model-a', 'loaded'],
          ['model-b', 'unloaded'],
          ['model-c', 'unloaded'],
          ['broken', 'unloaded', 'fails_to_load = true'],
        ],
      },
    ],
    others: {
      fleet: OTHERS,
      nodes: [
        { name: 'ollama', kind: 'ollama' },
        { name: 'vllm', kind: 'vllm' },
      ],
    },
    token: TOKEN,
    gateway: '[routing]\nload_timeout = "5s"\n',
  });
});

after(async () => {
  await rig?.close();
});

async function host(name: string): Promise<HostView | undefined> {
  const hosts = await httpJson('GET', `${rig.gw.url}/admin/hosts`, undefined, AUTH);
  return hosts.json<{ hosts: HostView[] }>().hosts.find((h) => h.name === name);
}

function admin(action: 'load' | 'unload', body: unknown, headers: Record<string, string> = AUTH) {
  return httpJson('POST', `${rig.gw.url}/admin/models/${action}`, body, headers);
}

async function ollamaLoaded(): Promise<string[]> {
  const ps = (await httpJson('GET', `${rig.sim.url('ollama')}/api/ps`)).json<{ models: { model: string }[] }>();
  return ps.models.map((m) => m.model);
}

test('load and unload need the admin token', async () => {
  assert.equal((await admin('load', { model: 'model-b', node: 'router' }, {})).status, 401);
  assert.equal((await admin('unload', { model: 'model-a', node: 'router' }, { authorization: 'Bearer wrong' })).status, 401);
  assert.equal(await rig.routerStatus('model-b'), 'unloaded');
});

test('a router loads and unloads on request, confirmed through its listing', async () => {
  const loaded = await admin('load', { model: 'model-b', node: 'router' });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json().outcome, 'done');
  assert.equal(await rig.routerStatus('model-b'), 'loaded');
  const again = await admin('load', { model: 'model-b' });
  assert.equal(again.json().outcome, 'already', again.text);
  const unloaded = await admin('unload', { model: 'model-b', node: 'router' });
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.equal(await rig.routerStatus('model-b'), 'unloaded');
});

test('Ollama loads with keep_alive and unloads with keep_alive 0, confirmed by /api/ps', async () => {
  const loaded = await admin('load', { model: 'qwen:7b' });
  assert.equal(loaded.status, 200, loaded.text);
  assert.equal(loaded.json().node, 'ollama');
  assert.deepEqual(await ollamaLoaded(), ['qwen:7b']);
  await untilEvent(
    async () => (await host('ollama'))?.loaded.includes('qwen:7b') === true,
    [nodeChanges(rig.gw)],
    'the gateway sees qwen loaded',
  );
  const unloaded = await admin('unload', { model: 'qwen:7b', node: 'ollama' });
  assert.equal(unloaded.status, 200, unloaded.text);
  assert.deepEqual(await ollamaLoaded(), []);
});

test('refusals say why: not supported, unknown node, not listed, node required', async () => {
  const vllm = await admin('unload', { model: 'fixed', node: 'vllm' });
  assert.equal(vllm.status, 422, vllm.text);
  assert.equal(vllm.json().code, 'not_supported');
  assert.equal((await admin('load', { model: 'model-b', node: 'nope' })).json().code, 'unknown_node');
  assert.equal((await admin('load', { model: 'no-such-model' })).json().code, 'not_listed');
  const noNode = await admin('unload', { model: 'model-a' });
  assert.equal(noNode.status, 400, noNode.text);
  const bad = await admin('load', '{"model": ');
  assert.equal(bad.status, 400, bad.text);
});

test('an unload is refused while a request for the model is in flight', async () => {
  // A long answer keeps the request in flight (20 ms ttft + 2000 tokens at 1000/s).
  const long = httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
    model: 'model-a',
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: 2000,
  });
  await untilEvent(
    async () => {
      return ((await host('router'))?.in_flight ?? 0) > 0;
    },
    [nodeChanges(rig.gw), requestEnds(rig.gw), rig.sim.activity('router')],
    'the request in flight',
  );
  const refused = await admin('unload', { model: 'model-a', node: 'router' });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json().code, 'in_flight');
  assert.equal(await rig.routerStatus('model-a'), 'loaded');
  assert.equal((await long).status, 200);
});

test('a load that fails answers its reason and is held off with a back-off', async () => {
  const failed = await admin('load', { model: 'broken', node: 'router' });
  assert.equal(failed.status, 502, failed.text);
  const body = failed.json<{ outcome: string; detail: string; retryAfterMs: number }>();
  assert.equal(body.outcome, 'failed');
  assert.match(body.detail, /load failed/);
  assert.ok(body.retryAfterMs > 0);
  const view = (await httpJson('GET', `${rig.gw.url}/admin/models`, undefined, AUTH)).json<{
    models: { model: string; failures: { node: string; reason: string }[] }[];
  }>();
  const row = view.models.find((m) => m.model === 'broken');
  assert.equal(row?.failures[0]?.node, 'router');
  assert.match(row?.failures[0]?.reason ?? '', /load failed/);
});

test('unloads racing random arrivals never unload a model mid-request, and every request is answered', async () => {
  // A seeded sequence: 24 requests for model-c at random gaps (0-30 ms), with an unload asked after
  // each arrival. The router itself counts unloads of a model with a request in flight.
  let seed = 2025;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const stats = async (): Promise<number> =>
    (await httpJson('GET', `${rig.sim.url('router')}/__sim/stats`)).json<{ residency: { unloadsMidRequest: number } }>().residency
      .unloadsMidRequest;
  const before = await stats();
  const requests: Promise<{ status: number }>[] = [];
  const unloads: ReturnType<typeof admin>[] = [];
  for (let i = 0; i < 24; i++) {
    const ask = (): void => {
      requests.push(
        httpJson('POST', `${rig.gw.url}/v1/chat/completions`, {
          model: 'model-c',
          messages: [{ role: 'user', content: `r${i}` }],
          max_tokens: 1 + Math.floor(random() * 20),
        }),
      );
    };
    const unload = (): void => {
      unloads.push(admin('unload', { model: 'model-c', node: 'router' }));
    };
    if (random() < 0.5) {
      ask();
      unload();
    } else {
      unload();
      ask();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 120)));
  }
  const answers = await Promise.all(requests);
  assert.deepEqual(
    answers.map((a) => a.status),
    answers.map(() => 200),
  );
  const outcomes = (await Promise.all(unloads)).map((u) => {
    assert.ok([200, 409].includes(u.status), u.text);
    const body = u.json<{ outcome: string; code?: string }>();
    return body.code ?? body.outcome;
  });
  assert.ok(outcomes.includes('in_flight'), `some unloads refused: ${outcomes.join(',')}`);
  // Once every answer is in, the unload goes through.
  await untilEvent(
    async () => (await host('router'))?.in_flight === 0,
    [nodeChanges(rig.gw), requestEnds(rig.gw), rig.sim.activity('router')],
    'nothing in flight',
  );
  const last = await admin('unload', { model: 'model-c', node: 'router' });
  assert.equal(last.status, 200, last.text);
  assert.equal(await stats(), before, 'no unload of a model with a request in flight');
});

test('a load on a full router unloads an idle model first, then loads', async () => {
  const a = await admin('load', { model: 'model-a', node: 'router' });
  assert.ok([200].includes(a.status), a.text);
  const c = await admin('load', { model: 'model-c', node: 'router' });
  assert.ok([200].includes(c.status), c.text);
  await untilEvent(async () => (await host('router'))?.loaded.length === 2, [nodeChanges(rig.gw)], 'the router full');
  const b = await admin('load', { model: 'model-b', node: 'router' });
  assert.equal(b.status, 200, b.text);
  assert.ok(['model-a', 'model-c'].includes(String(b.json().evicted)), b.text);
});
