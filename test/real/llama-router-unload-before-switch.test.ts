// Issue 25 against a real llama-server router (runs only when LLAMA_SERVER_BIN and LLAMA_MODELS_DIR
// are set; CI has neither): `--models-max 1`. The gateway unloads the idle model itself before a
// request's switch loads the other one, so (1) a switch request sent right after the previous
// answer ended (the router's own count of that model may not have dropped yet) never waits for
// routing.load_timeout, and (2) three waves of alternating models show no request waiting longer
// than the loaded model's answers plus one load, every request answered, one model at a time.
// Models: `LLAMACPP_SRC=<checkout> ../shared/tools/make-tiny-gguf.py DIR` makes three tiny ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { eventually, httpJson } from '#test/fixtures/http.ts';
import { realRouterSkip, startRealRouter, type ListedModel, type RealRouter } from '#test/fixtures/real-llama-router.ts';

const skip = realRouterSkip;
const LOAD_TIMEOUT_MS = 60_000;

let router: RealRouter | undefined;
let routerUrl = '';
let gw: GatewayUnderTest | undefined;
/** How long one load takes on this machine, measured on the router itself before the gateway starts. */
let oneLoadMs = 0;
let ids: string[] = [];

async function listing(): Promise<ListedModel[]> {
  return (await httpJson('GET', `${routerUrl}/v1/models`)).json<{ data: ListedModel[] }>().data;
}

const running = (m: ListedModel): boolean => m.status?.value === 'loaded' || m.status?.value === 'loading';

before(async () => {
  if (skip !== false) return;
  router = await startRealRouter(1);
  routerUrl = router.url;
  try {
    ids = (await listing()).map((m) => m.id).sort();
    const started = performance.now();
    assert.equal((await httpJson('POST', `${routerUrl}/models/load`, { model: ids[0] })).status, 200);
    await eventually(
      async () => (await listing()).find((m) => m.id === ids[0])?.status?.value === 'loaded',
      60_000,
      'the first load',
    );
    oneLoadMs = performance.now() - started;
    gw = await startGateway(
      gatewayToml(
        [{ name: 'router', url: routerUrl, kind: 'llamacpp' }],
        `[routing]\nqueue_timeout = "60s"\nswap_after = "5s"\nload_timeout = "${LOAD_TIMEOUT_MS / 1000}s"`,
      ),
    );
    await waitForHost(gw, 'router', (h) => h.router?.max_instances === 1 && h.loaded.length === 1, 'max_instances learned');
  } catch (error) {
    router.stop();
    router = undefined;
    throw error;
  }
});

after(async () => {
  await gw?.close();
  router?.stop();
});

// Greedy and short: the tiny models' random output can fail llama.cpp's output parser with a 500.
async function complete(model: string): Promise<{ status: number; ms: number; text: string }> {
  const started = performance.now();
  const answer = await httpJson('POST', `${gw!.url}/v1/completions`, { model, prompt: 'hi', max_tokens: 2, temperature: 0 });
  return { status: answer.status, ms: performance.now() - started, text: answer.text };
}

test(
  'a switch request right after the previous answer ended is answered within a few loads, not at load_timeout',
  { skip },
  async () => {
    const [first, second] = ids as [string, string];
    const warm = await complete(first);
    assert.equal(warm.status, 200, warm.text);
    const switched = await complete(second);
    assert.equal(switched.status, 200, switched.text);
    process.stderr.write(`real router gap: one load ${Math.round(oneLoadMs)}ms, the switch ${Math.round(switched.ms)}ms\n`);
    assert.ok(
      switched.ms < Math.max(5_000, 4 * oneLoadMs),
      `the switch took ${Math.round(switched.ms)}ms (one load ${Math.round(oneLoadMs)}ms)`,
    );
    assert.ok((await listing()).filter(running).length <= 1);
  },
);

test(
  'three waves of alternating models on a real --models-max 1 router: all 200, no request waits longer than the answers before it plus one load',
  { skip },
  async () => {
    const [first, second] = ids as [string, string];
    let peakResident = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakResident = Math.max(peakResident, (await listing()).filter(running).length);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const waves: { statuses: number[]; slowestMs: number }[] = [];
    try {
      for (const [a, b] of [
        [first, second],
        [second, first],
        [first, second],
      ] as const) {
        const answers = await Promise.all([a, b, a, b, a, b].map((model) => complete(model)));
        waves.push({ statuses: answers.map((r) => r.status), slowestMs: Math.round(Math.max(...answers.map((r) => r.ms))) });
        for (const r of answers) if (r.status !== 200) process.stderr.write(`non-200: ${r.status} ${r.text.slice(0, 400)}\n`);
      }
    } finally {
      sampling = false;
      await sampler;
    }
    process.stderr.write(
      `real router waves (unload before switch): ${JSON.stringify(waves)}, one load ${Math.round(oneLoadMs)}ms, peak resident ${peakResident}\n`,
    );
    for (const wave of waves) assert.deepEqual(wave.statuses, [200, 200, 200, 200, 200, 200]);
    assert.ok(peakResident <= 1, `the router never held more than one model (peak ${peakResident})`);
    // A wave: the loaded model's three answers, then one switch (unload + load), then the other's three.
    for (const wave of waves)
      assert.ok(
        wave.slowestMs < Math.max(10_000, 6 * oneLoadMs),
        `slowest ${wave.slowestMs}ms, one load ${Math.round(oneLoadMs)}ms`,
      );
  },
);
