// `npm run bench -- --mesh [--sites 32] [--heartbeat 2s] [--measure 10]`: a federation of N real
// `switchyard serve` processes on 127.0.0.1 (one light simulated node each, all in one sim
// process), each dialling three others, gossiping over libp2p + gossipsub. Prints:
//   - start-up convergence: every site sees every other fresh;
//   - convergence after a change: site 0 starts serving a new model → every other site lists it;
//   - time to fail closed after a kill: the last site is SIGKILLed → every other marks it stale;
//   - gossip bytes per second per site in steady state (gateway_mesh_gossip_bytes_total: gossipsub
//     RPC bytes in and out, relays and control included), and a linear projection;
//   - resident memory per gateway.
// Writes bench/results/mesh-latest.md (and .json) unless --no-write.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startMeshFleet, type MeshFleet, type MeshSite } from '#test/mesh/mesh-fleet.ts';
import { metricValue, rowOf, sitesOf, waitFor } from '#test/mesh/helpers.ts';
import { clockTicksPerSecond, cpuSeconds, memory } from './proc-stats.ts';
import { REPO_ROOT } from './processes.ts';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

interface MeshBenchResult {
  readonly generatedAt: string;
  readonly sites: number;
  readonly heartbeatMs: number;
  readonly freshnessMs: number;
  readonly startSeconds: number;
  readonly startupConvergenceMs: number;
  readonly changeConvergenceMs: { readonly median: number; readonly max: number };
  readonly failClosedMs: { readonly median: number; readonly max: number };
  readonly bytesPerSecondPerSite: { readonly inMean: number; readonly outMean: number; readonly totalMean: number; readonly totalMax: number };
  readonly rssMiBPerGateway: { readonly mean: number; readonly max: number };
  /** CPU of each gateway process over the steady-state window (% of one core; includes its health/discovery loops). */
  readonly cpuPercentPerGateway: { readonly mean: number; readonly max: number };
}

function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text);
  if (m === null) throw new Error(`--heartbeat: not a duration like "1s" or "500ms": ${text}`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const max = (xs: readonly number[]): number => xs.reduce((a, b) => Math.max(a, b), 0);
const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** Polls every site in `sites` until `done(site)` holds for it; returns each site's time from `t0`. */
async function timesUntil(sites: readonly MeshSite[], t0: number, done: (s: MeshSite) => Promise<boolean>, what: string, timeoutMs: number): Promise<number[]> {
  const at = new Map<string, number>();
  await waitFor(
    async () => {
      await Promise.all(
        sites.filter((s) => !at.has(s.id)).map(async (s) => {
          // A gateway starved of CPU may answer late: that poll counts as "not yet".
          if (await done(s).catch(() => false)) at.set(s.id, performance.now() - t0);
        }),
      );
      return at.size === sites.length;
    },
    what,
    timeoutMs,
    // Every poll is one HTTP request per site not done yet: 100 ms keeps the benchmark's own load
    // small next to the gossip it measures, at a resolution well under a heartbeat.
    100,
  );
  return [...at.values()];
}

async function gossipBytes(s: MeshSite): Promise<{ in: number; out: number }> {
  const text = await s.metrics();
  return { in: metricValue(text, 'gateway_mesh_gossip_bytes_total', 'direction="in"'), out: metricValue(text, 'gateway_mesh_gossip_bytes_total', 'direction="out"') };
}

export async function runMeshBench(argv: readonly string[]): Promise<MeshBenchResult> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      mesh: { type: 'boolean', default: true },
      sites: { type: 'string', default: '32' },
      heartbeat: { type: 'string', default: '2s' },
      measure: { type: 'string', default: '10' },
      'no-write': { type: 'boolean', default: false },
    },
    strict: false,
  });
  const count = Number(values.sites);
  const heartbeatMs = durationMs(String(values.heartbeat));
  const freshnessMs = 3 * heartbeatMs;
  const measureS = Number(values.measure);
  const ids = Array.from({ length: count }, (_, i) => `site-${String(i).padStart(2, '0')}`);
  log(`mesh benchmark: ${count} sites, heartbeat ${heartbeatMs} ms, freshness ${freshnessMs} ms`);
  const started = performance.now();
  let fleet: MeshFleet | undefined;
  try {
    fleet = await startMeshFleet({
      sites: ids.map((id, i) => ({
        id,
        nodes: [
          { name: `${id}-n`, models: [`model-${i}`, 'shared'], context: 4_096 },
          ...(i === 0 ? [{ name: `${id}-new`, models: ['brand-new'], context: 4_096 }] : []),
        ],
        ...(i === 0 ? { dormant: [`${id}-new`] } : {}),
      })),
      // Each site dials the next three (a ring with chords): about six connections per site, the
      // gossipsub mesh degree, so records cross relays as they would across many real sites.
      peersOf: (i, n) => [(i + 1) % n, (i + 2) % n, (i + 5) % n].filter((j) => j !== i),
      timings: { heartbeat: `${heartbeatMs}ms`, freshness: `${freshnessMs}ms`, maxModelsPerSite: 256, loop: '5s', loopTimeout: '20s', startTimeoutMs: 240_000 },
      startConcurrency: 4,
    });
    const sites = ids.map((id) => fleet!.site(id));
    const startSeconds = (performance.now() - started) / 1000;
    log(`started ${count} gateways in ${startSeconds.toFixed(1)} s; waiting for every site to see every other fresh`);
    const startupConvergenceMs = max(
      await timesUntil(sites, performance.now(), async (s) => (await sitesOf(s)).sites.filter((r) => r.fresh).length === count - 1, 'start-up convergence', 180_000),
    );
    log(`converged ${Math.round(startupConvergenceMs)} ms after the last gateway started`);

    log(`steady state: gossip bytes over ${measureS} s`);
    const ticks = clockTicksPerSecond();
    const pids = sites.map((s) => s.process!.child.pid!);
    const cpu0 = pids.map((pid) => cpuSeconds(pid, ticks));
    const b0 = await Promise.all(sites.map(gossipBytes));
    const tb0 = performance.now();
    await new Promise((r) => setTimeout(r, measureS * 1000));
    const b1 = await Promise.all(sites.map(gossipBytes));
    const seconds = (performance.now() - tb0) / 1000;
    const cpuPercent = pids.map((pid, i) => ((cpuSeconds(pid, ticks) - cpu0[i]!) / seconds) * 100);
    const inRates = b1.map((b, i) => (b.in - b0[i]!.in) / seconds);
    const outRates = b1.map((b, i) => (b.out - b0[i]!.out) / seconds);
    const totals = inRates.map((r, i) => r + outRates[i]!);
    const rss = sites.map((s) => memory(s.process!.child.pid!).rssBytes / 2 ** 20);

    log('convergence after a change: site 0 starts serving brand-new');
    const first = sites[0]!;
    await first.setNodes([`${ids[0]}-n`, `${ids[0]}-new`]);
    await waitFor(async () => (await sitesOf(first)).site?.models.some((m) => m.id === 'brand-new') === true, 'site 0 to publish brand-new', 20_000, 10);
    const changed = performance.now();
    const change = await timesUntil(sites.slice(1), changed, async (s) => (await rowOf(s, ids[0]!))?.models.some((m) => m.id === 'brand-new') === true, 'every site to learn brand-new', 30_000);

    const victim = sites[count - 1]!;
    log(`time to fail closed: SIGKILL ${victim.id}`);
    await victim.stop('SIGKILL');
    const killed = performance.now();
    const failClosed = await timesUntil(sites.slice(0, -1), killed, async (s) => (await rowOf(s, victim.id))?.fresh === false, 'every site to mark the victim stale', 30_000);

    return {
      generatedAt: new Date().toISOString(),
      sites: count,
      heartbeatMs,
      freshnessMs,
      startSeconds,
      startupConvergenceMs,
      changeConvergenceMs: { median: median(change), max: max(change) },
      failClosedMs: { median: median(failClosed), max: max(failClosed) },
      bytesPerSecondPerSite: { inMean: mean(inRates), outMean: mean(outRates), totalMean: mean(totals), totalMax: max(totals) },
      rssMiBPerGateway: { mean: mean(rss), max: max(rss) },
      cpuPercentPerGateway: { mean: mean(cpuPercent), max: max(cpuPercent) },
    };
  } finally {
    await fleet?.stop();
  }
}

export function renderMeshMarkdown(r: MeshBenchResult): string {
  const per = r.bytesPerSecondPerSite;
  // Each site's steady-state traffic is dominated by the others' heartbeats it receives and
  // relays: linear in the number of sites at a fixed heartbeat, inversely so in the heartbeat.
  const perSitePerPeer = per.totalMean / (r.sites - 1);
  const at1000 = (heartbeatMs: number): number => perSitePerPeer * 999 * (r.heartbeatMs / heartbeatMs);
  const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB/s`;
  return [
    `# Mesh benchmark (${r.generatedAt})`,
    '',
    `${r.sites} gateway processes on 127.0.0.1, one light simulated node each; heartbeat ${r.heartbeatMs} ms, freshness ${r.freshnessMs} ms; each site dials 3 others.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| start ${r.sites} gateways (4 at a time) | ${r.startSeconds.toFixed(1)} s |`,
    `| start-up convergence (all see all fresh) | ${Math.round(r.startupConvergenceMs)} ms |`,
    `| convergence after a change (median / max over ${r.sites - 1} sites) | ${Math.round(r.changeConvergenceMs.median)} / ${Math.round(r.changeConvergenceMs.max)} ms |`,
    `| fail closed after a kill (median / max; bound = freshness ${r.freshnessMs} ms) | ${Math.round(r.failClosedMs.median)} / ${Math.round(r.failClosedMs.max)} ms |`,
    `| gossip bytes per site, in + out (mean / max) | ${kib(per.totalMean)} / ${kib(per.totalMax)} (in ${kib(per.inMean)}, out ${kib(per.outMean)}) |`,
    `| per site, per other site | ${(perSitePerPeer).toFixed(0)} B/s |`,
    `| projection to 1,000 sites, heartbeat ${r.heartbeatMs} ms / 5 s (default) | ${kib(at1000(r.heartbeatMs))} / ${kib(at1000(5_000))} per site |`,
    `| resident memory per gateway (mean / max) | ${r.rssMiBPerGateway.mean.toFixed(0)} / ${r.rssMiBPerGateway.max.toFixed(0)} MiB |`,
    `| CPU per gateway in steady state (mean / max, % of one core) | ${r.cpuPercentPerGateway.mean.toFixed(1)} / ${r.cpuPercentPerGateway.max.toFixed(1)} % |`,
    '',
  ].join('\n');
}

export async function mainMesh(argv: readonly string[]): Promise<void> {
  const result = await runMeshBench(argv);
  const markdown = renderMeshMarkdown(result);
  if (!argv.includes('--no-write')) {
    await writeFile(join(REPO_ROOT, 'bench/results/mesh-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
    await writeFile(join(REPO_ROOT, 'bench/results/mesh-latest.md'), markdown);
    log('wrote bench/results/mesh-latest.json and bench/results/mesh-latest.md');
  }
  process.stdout.write(markdown);
}

if (import.meta.main) await mainMesh(process.argv.slice(2));
