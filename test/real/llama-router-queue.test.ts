// Issue 41 item 3 against a real llama-server router (runs only when LLAMA_SERVER_BIN and
// LLAMA_MODELS_DIR are set; CI has neither): two models at --models-max 1 (a directory holding only
// them), -np 1, 12 concurrent streamed requests through an in-process gateway, first with the router's
// own queue (router_queue = "auto": the gateway decides the router holds the switches — its
// build_info is read — and holds none itself), then with the gateway's queue (router_queue =
// "gateway"). Every request is answered, the router never runs two models, and the figures (each
// request's wait until its answer's head, the router's loads) are printed: the double-queueing
// measurement. Nothing is judged by wall time.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { realRouterSkip, startRealRouter, type RealRouter } from '#test/fixtures/real-llama-router.ts';
import { burst, countLoads, spread, twoModelDir } from '#test/fixtures/real-router-burst.ts';

const skip = realRouterSkip;
const MODELS: readonly [string, string] = ['tiny-llama-a', 'tiny-llama-b'];

let router: RealRouter | undefined;
let models: { readonly dir: string; cleanup(): Promise<void> } | undefined;

before(async () => {
  if (skip !== false) return;
  models = await twoModelDir(process.env.LLAMA_MODELS_DIR ?? '', MODELS);
  router = await startRealRouter(1, { modelsDir: models.dir, parallel: 1 });
});

after(async () => {
  router?.stop();
  await models?.cleanup();
});

async function throughGateway(mode: 'auto' | 'gateway'): Promise<Record<string, unknown>> {
  const url = router!.url;
  let gw: GatewayUnderTest | undefined;
  const loads = countLoads(url);
  try {
    gw = await startGateway(
      gatewayToml(
        [{ name: 'router', url, kind: 'llamacpp' }],
        `[routing]\nqueue_timeout = "300s"\nload_timeout = "300s"\nswap_after = "5s"\nrouter_queue = "${mode}"\n`,
      ),
    );
    await waitForHost(gw, 'router', (h) => h.router?.max_instances === 1, 'max_instances learned');
    const result = await burst(gw.url, MODELS, 12);
    const metrics = await gw.metrics();
    const held = metrics
      .split('\n')
      .filter((l) => l.startsWith('gateway_queue_wait_seconds_count{') && l.includes('outcome="admitted"'))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    const figures = {
      mode,
      statuses: result.statuses,
      waits_ms: result.waitsMs,
      wait: spread(result.waitsMs),
      loads: loads.loads(),
      held,
    };
    process.stderr.write(`real router queue: ${JSON.stringify(figures)}\n`);
    return figures;
  } finally {
    loads.stop();
    await gw?.close();
  }
}

test(
  'a real --models-max 1 router with its own queue: the gateway holds nothing, every request is answered',
  { skip },
  async () => {
    const figures = await throughGateway('auto');
    assert.deepEqual(
      figures['statuses'],
      Array.from({ length: 12 }, () => 200),
    );
    assert.equal(figures['held'], 0, 'the gateway did not queue a second time');
    const listing = await router!.listing();
    assert.ok(listing.filter((m) => m.status?.value === 'loaded').length <= 1);
  },
);

test('the same burst with the gateway holding the switches: every request is answered', { skip }, async () => {
  const figures = await throughGateway('gateway');
  assert.deepEqual(
    figures['statuses'],
    Array.from({ length: 12 }, () => 200),
  );
  assert.ok(Number(figures['held']) > 0, 'the gateway held requests for the switch');
});
