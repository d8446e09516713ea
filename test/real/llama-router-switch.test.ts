// Issue 17 against a real llama-server router (runs only when LLAMA_SERVER_BIN and LLAMA_MODELS_DIR
// are set; CI has neither): `--models-max 1`, three waves of six concurrent requests alternating
// between two models, through an in-process gateway. Every request must be answered, the router must
// never hold more than one model, and the gateway must switch once per wave.
// Models: `LLAMACPP_SRC=<checkout> ../shared/tools/make-tiny-gguf.py DIR` makes three tiny ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { realRouterSkip, startRealRouter, type ListedModel, type RealRouter } from '#test/fixtures/real-llama-router.ts';

const skip = realRouterSkip;

let router: RealRouter | undefined;
let routerUrl = '';
let gw: GatewayUnderTest | undefined;

async function listing(): Promise<ListedModel[]> {
  return (await httpJson('GET', `${routerUrl}/v1/models`)).json<{ data: ListedModel[] }>().data;
}

before(async () => {
  if (skip !== false) return;
  router = await startRealRouter(1);
  routerUrl = router.url;
  gw = await startGateway(
    gatewayToml([{ name: 'router', url: routerUrl, kind: 'llamacpp' }], '[routing]\nqueue_timeout = "60s"\nswap_after = "5s"'),
  );
  await waitForHost(gw, 'router', (h) => h.router?.max_instances === 1, 'max_instances learned');
});

after(async () => {
  await gw?.close();
  router?.stop();
});

test(
  'three waves of six requests for two models on a real --models-max 1 router: all 200, one switch per wave',
  { skip },
  async () => {
    const ids = (await listing()).map((m) => m.id).sort();
    const [first, second] = ids as [string, string];
    let peakResident = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const resident = (await listing()).filter((m) => m.status?.value === 'loaded' || m.status?.value === 'loading').length;
        peakResident = Math.max(peakResident, resident);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // Greedy and short: the tiny models' random output can fail llama.cpp's output parser with a 500
    // ("does not match the expected … format"), which says nothing about switching; greedy decoding
    // makes each model's answer the same every time.
    const chat = (model: string) =>
      httpJson('POST', `${gw!.url}/v1/completions`, { model, prompt: 'hi', max_tokens: 2, temperature: 0 });
    const waves: { statuses: number[]; ms: number }[] = [];
    for (const [a, b] of [
      [first, second],
      [second, first],
      [first, second],
    ] as const) {
      const started = performance.now();
      const answers = await Promise.all([a, b, a, b, a, b].map((model) => chat(model)));
      waves.push({ statuses: answers.map((r) => r.status), ms: Math.round(performance.now() - started) });
      for (const r of answers)
        if (r.status !== 200) process.stderr.write(`non-200: ${r.status} ${JSON.stringify(r.headers)} ${r.text.slice(0, 400)}\n`);
    }
    sampling = false;
    await sampler;
    const metrics = await gw!.metrics();
    const switches = Number(
      metrics
        .split('\n')
        .find((l) => l.startsWith('gateway_model_switches_total{node="router"}'))
        ?.split(' ')
        .at(-1) ?? 0,
    );
    process.stderr.write(`real router waves: ${JSON.stringify(waves)}, switches ${switches}, peak resident ${peakResident}\n`);
    for (const wave of waves) assert.deepEqual(wave.statuses, [200, 200, 200, 200, 200, 200]);
    assert.ok(peakResident <= 1, `the router never held more than one model (peak ${peakResident})`);
    assert.ok(switches >= 3 && switches <= 6, `switches: ${switches} (the minimum is one per wave; at most two)`);
  },
);
