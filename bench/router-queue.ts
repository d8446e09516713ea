// Issue 41 item 3: double-queueing on a real llama-server router, measured. Two models at
// --models-max 1 (-np 1), `rounds` bursts of 12 concurrent streamed requests alternating between
// them, three ways: straight to the router (its own queue alone), through the gateway letting the
// router queue (router_queue = "auto"), and through the gateway holding the switches itself
// (router_queue = "gateway"). Per way: each request's wait until its answer's head (p50, max) and
// the router's loads (its /models/sse spawns).
// A row of `npm run bench` (`--only router-queue`, `--router-queue-rounds N`), skipped with the reason
// unless LLAMA_SERVER_BIN and LLAMA_MODELS_DIR are set (a real router and its models: DEVELOPERS.md).
// By hand: LLAMA_SERVER_BIN=… LLAMA_MODELS_DIR=… node bench/router-queue.ts [rounds] (one JSON line per way).
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway } from '#test/fixtures/in-process-fleet.ts';
import { waitForHost } from '#test/fixtures/admin-readers.ts';
import { startRealRouter } from '#test/fixtures/real-llama-router.ts';
import { burst, countLoads, spread, twoModelDir } from '#test/fixtures/real-router-burst.ts';

const MODELS: readonly [string, string] = ['tiny-llama-a', 'tiny-llama-b'];
const WAYS = ['router alone', 'gateway, router_queue = auto', 'gateway, router_queue = gateway'] as const;

export interface RouterQueueRow {
  readonly way: (typeof WAYS)[number];
  readonly rounds: number;
  readonly requests: number;
  readonly ok: number;
  readonly wait_ms: { readonly p50: number; readonly max: number };
  readonly loads: number;
  readonly loads_per_round: number;
  readonly errors: readonly string[];
}

/** The rows, or why the bench did not run (no real router to run it on). */
export type RouterQueueResult = { readonly rows: readonly RouterQueueRow[] } | { readonly skipped: string };

/** Why the bench cannot run here; undefined when a real router and its models are given. */
export function routerQueueSkip(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const missing = ['LLAMA_SERVER_BIN', 'LLAMA_MODELS_DIR'].filter((name) => env[name] === undefined || env[name] === '');
  if (missing.length === 0) return undefined;
  return `router-queue skipped: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set (a real llama-server binary and a directory holding ${MODELS.join(' and ')}: see DEVELOPERS.md)`;
}

export async function runRouterQueueBench(options: {
  readonly rounds: number;
  readonly log: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<RouterQueueResult> {
  const env = options.env ?? process.env;
  const skipped = routerQueueSkip(env);
  if (skipped !== undefined) {
    options.log(skipped);
    return { skipped };
  }
  const { rounds } = options;
  options.log(`router-queue: ${rounds} burst(s) of 12 on a real router at --models-max 1, three ways (bench/router-queue.ts)`);
  const dir = await twoModelDir(String(env.LLAMA_MODELS_DIR), MODELS);
  const router = await startRealRouter(1, { modelsDir: dir.dir, parallel: 1 });
  const rows: RouterQueueRow[] = [];
  try {
    for (const way of WAYS) {
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
        const row: RouterQueueRow = {
          way,
          rounds,
          requests: statuses.length,
          ok: statuses.filter((s) => s === 200).length,
          wait_ms: spread(waits),
          loads: loads.loads(),
          loads_per_round: loads.loads() / rounds,
          errors: [...errors],
        };
        options.log(`router-queue: ${JSON.stringify(row)}`);
        rows.push(row);
      } finally {
        await gw?.close();
      }
    }
  } finally {
    router.stop();
    await dir.cleanup();
  }
  return { rows };
}

/** The markdown section: the three ways, or the reason it was skipped. */
export function renderRouterQueue(result: RouterQueueResult | undefined): string {
  if (result === undefined) return '';
  if ('skipped' in result) return `\n### Router queue (issue 41)\n\n${result.skipped}.\n`;
  const out = [
    '',
    '### Router queue (issue 41): two models on a real llama-server router at --models-max 1, bursts of 12',
    '',
    '| way | answered | wait p50 ms | wait max ms | loads a round | errors |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of result.rows)
    out.push(
      `| ${r.way} | ${r.ok}/${r.requests} | ${Math.round(r.wait_ms.p50)} | ${Math.round(r.wait_ms.max)} | ${r.loads_per_round.toFixed(2)} | ${r.errors.join('; ').replace(/\|/g, '/')} |`,
    );
  return `${out.join('\n')}\n`;
}

if (import.meta.main) {
  const result = await runRouterQueueBench({
    rounds: Number(process.argv[2] ?? 3),
    log: (line) => void process.stderr.write(`${line}\n`),
  });
  if ('skipped' in result) process.exit(2);
  for (const row of result.rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
