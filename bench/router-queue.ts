// Issue 41 item 3: double-queueing on a real llama-server router, measured. Two models at
// --models-max 1 (-np 1), `rounds` bursts of 12 concurrent streamed requests alternating between
// them, three ways: straight to the router (its own queue alone), through the gateway letting the
// router queue (router_queue = "auto"), and through the gateway holding the switches itself
// (router_queue = "gateway"). Per way: each request's wait until its answer's head (p50, max) and
// the router's loads (its /models/sse spawns). One JSON line per way.
// Run: LLAMA_SERVER_BIN=… LLAMA_MODELS_DIR=… node bench/router-queue.ts [rounds]
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { startRealRouter } from '#test/fixtures/real-llama-router.ts';
import { burst, countLoads, spread, twoModelDir } from '#test/fixtures/real-router-burst.ts';

const MODELS: readonly [string, string] = ['tiny-llama-a', 'tiny-llama-b'];
const rounds = Number(process.argv[2] ?? 3);
const modelsDir = process.env.LLAMA_MODELS_DIR;
if (process.env.LLAMA_SERVER_BIN === undefined || modelsDir === undefined) {
  process.stderr.write('set LLAMA_SERVER_BIN and LLAMA_MODELS_DIR\n');
  process.exit(2);
}

const dir = await twoModelDir(modelsDir, MODELS);
const router = await startRealRouter(1, { modelsDir: dir.dir, parallel: 1 });
try {
  for (const way of ['router alone', 'gateway, router_queue = auto', 'gateway, router_queue = gateway'] as const) {
    const mode = way.endsWith('gateway') ? 'gateway' : 'auto';
    const gw =
      way === 'router alone'
        ? undefined
        : await startGateway(
            gatewayToml(
              [{ name: 'router', url: router.url, kind: 'llamacpp' }],
              `[routing]\nqueue_timeout = "300s"\nload_timeout = "300s"\nswap_after = "5s"\nrouter_queue = "${mode}"\n`,
            ),
          );
    try {
      if (gw !== undefined) await waitForHost(gw, 'router', (h) => h.router?.max_instances === 1, 'max_instances learned');
      const waits: number[] = [];
      const statuses: number[] = [];
      const errors = new Set<string>();
      const loads = countLoads(router.url);
      for (let round = 0; round < rounds; round++) {
        const result = await burst(gw?.url ?? router.url, round % 2 === 0 ? MODELS : [MODELS[1], MODELS[0]], 12);
        waits.push(...result.waitsMs);
        statuses.push(...result.statuses);
        for (const error of result.errors) errors.add(error);
      }
      loads.stop();
      const ok = statuses.filter((s) => s === 200).length;
      process.stdout.write(
        `${JSON.stringify({ way, rounds, requests: statuses.length, ok, wait_ms: spread(waits), loads: loads.loads(), loads_per_round: loads.loads() / rounds, errors: [...errors] })}\n`,
      );
    } finally {
      await gw?.close();
    }
  }
} finally {
  router.stop();
  await dir.cleanup();
}
