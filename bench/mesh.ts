// `npm run bench -- --mesh [--sites 32] [--heartbeat 2s] [--measure 10]`: a federation of N real
// `switchyard serve` processes on 127.0.0.1 (one light simulated node each, all in one sim
// process), each dialling three others, gossiping over libp2p + gossipsub. Prints:
//   - cold-start convergence: from the last gateway starting until every site has seen every other
//     fresh (the bound: three heartbeats), read from the gateways' freshness log lines
//     (mesh-timeline.ts), then checked once against /admin/sites;
//   - convergence after a change: site 0 starts serving a new model → every other site lists it;
//   - time to fail closed after a kill: the last site is SIGKILLed → every other marks it stale;
//   - gossip bytes per second per site in steady state (gateway_mesh_gossip_bytes_total: gossipsub
//     RPC bytes in and out, relays and control included), and a linear projection;
//   - resident memory per gateway.
// Each phase that fails or times out is reported as such, with what the earlier ones measured;
// the run then stops every process (on SIGINT/SIGTERM too) and exits 1.
// Writes bench/results/mesh-latest.md (and .json) unless --no-write.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startMeshFleet, type MeshFleet, type MeshSite } from '#test/integration/mesh/mesh-fleet.ts';
import { metricValue, rowOf, sitesOf, waitFor } from '#test/integration/mesh/helpers.ts';
import { clockTicksPerSecond, cpuSeconds, memory } from './proc-stats.ts';
import { REPO_ROOT } from './processes.ts';
import { firstComplete, freshCounts, readSiteLog, type FreshnessTransition } from './mesh-timeline.ts';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

/** A phase that did not finish: what it was waiting for, and how far it got. */
export interface PhaseProblem {
  readonly phase: string;
  readonly problem: string;
}

/** Every measure is optional: a phase that fails or times out leaves its own out, and says why in `problems`. */
export interface MeshBenchResult {
  readonly generatedAt: string;
  readonly sites: number;
  readonly heartbeatMs: number;
  readonly freshnessMs: number;
  readonly startSeconds?: number;
  /**
   * Cold start: from the last gateway starting (`fromReadyMs`: it logged that it listens, its mesh
   * up; `fromSpawnMs`: its process spawned) until every site has seen every other fresh (each site's
   * first such moment, from its own freshness log lines: bench/mesh-timeline.ts), and the median
   * site's time.
   */
  readonly startupConvergence?: {
    readonly fromReadyMs: number;
    readonly fromSpawnMs: number;
    readonly medianMs: number;
    readonly heartbeats: number;
    /** How many sites, asked once right after, still saw every other fresh (a busy machine may flap a site). */
    readonly stillFreshAfter: number;
  };
  readonly changeConvergenceMs?: { readonly median: number; readonly max: number };
  readonly failClosedMs?: { readonly median: number; readonly max: number };
  readonly bytesPerSecondPerSite?: {
    readonly inMean: number;
    readonly outMean: number;
    readonly totalMean: number;
    readonly totalMax: number;
  };
  readonly rssMiBPerGateway?: { readonly mean: number; readonly max: number };
  /** CPU of each gateway process over the steady-state window (% of one core; includes its health/discovery loops). */
  readonly cpuPercentPerGateway?: { readonly mean: number; readonly max: number };
  readonly problems: readonly PhaseProblem[];
}

/** Cold-start convergence within this many heartbeats of the last site starting (issue 20, item 8). */
export const CONVERGENCE_HEARTBEATS = 3;

function durationMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(text);
  if (m === null) throw new Error(`--heartbeat: not a duration like "1s" or "500ms": ${text}`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const max = (xs: readonly number[]): number => xs.reduce((a, b) => Math.max(a, b), 0);
const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
/** One line of at most 300 characters (a start failure quotes the process's whole output). */
const message = (error: unknown): string => {
  const text = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 299)}…` : line;
};

/** Each site's time from `t0` until `done(site)` held, and the sites for which it never did within the timeout. */
interface Times {
  readonly ms: readonly number[];
  readonly missing: readonly string[];
}

/** Polls every site in `sites` until `done(site)` holds for it or `timeoutMs` passes; never throws. */
async function timesUntil(
  sites: readonly MeshSite[],
  t0: number,
  done: (s: MeshSite) => Promise<boolean>,
  timeoutMs: number,
): Promise<Times> {
  const at = new Map<string, number>();
  const deadline = performance.now() + timeoutMs;
  while (at.size < sites.length && performance.now() < deadline) {
    await Promise.all(
      sites
        .filter((s) => !at.has(s.id))
        .map(async (s) => {
          // A gateway starved of CPU may answer late, or not within its 10 s: that poll counts as "not yet".
          if (await done(s).catch(() => false)) at.set(s.id, performance.now() - t0);
        }),
    );
    // Every poll is one HTTP request per site not done yet: 100 ms keeps the benchmark's own load
    // small next to the gossip it measures, at a resolution well under a heartbeat.
    if (at.size < sites.length) await new Promise((r) => setTimeout(r, 100));
  }
  return { ms: [...at.values()], missing: sites.filter((s) => !at.has(s.id)).map((s) => s.id) };
}

/** The problem of a wait that did not finish for every site, naming a few of those it waited for. */
function unfinished(what: string, times: Times, timeoutMs: number): string {
  const names = times.missing.slice(0, 5).join(', ') + (times.missing.length > 5 ? `, … (${times.missing.length} in all)` : '');
  return `${times.missing.length} of ${times.ms.length + times.missing.length} sites did not ${what} within ${timeoutMs / 1000} s: ${names}`;
}

/** Reads the sites' log lines as they arrive: freshness transitions, and each one's "gateway listening" time. */
function startupLog(sites: readonly MeshSite[]): {
  read(): { first: ReadonlyMap<string, number>; fresh: ReadonlyMap<string, number>; listening: ReadonlyMap<string, number> };
} {
  const ids = sites.map((s) => s.id);
  const transitions: FreshnessTransition[] = [];
  const offsets = new Map<string, number>();
  const listening = new Map<string, number>();
  return {
    read() {
      for (const s of sites) {
        const lines = s.process?.lines ?? [];
        const got = readSiteLog(s.id, lines.slice(offsets.get(s.id) ?? 0));
        offsets.set(s.id, lines.length);
        transitions.push(...got.transitions);
        if (got.listeningAt !== undefined) listening.set(s.id, got.listeningAt);
      }
      return { first: firstComplete(ids, transitions), fresh: freshCounts(ids, transitions), listening };
    },
  };
}

async function gossipBytes(s: MeshSite): Promise<{ in: number; out: number }> {
  const text = await s.metrics();
  return {
    in: metricValue(text, 'gateway_mesh_gossip_bytes_total', 'direction="in"'),
    out: metricValue(text, 'gateway_mesh_gossip_bytes_total', 'direction="out"'),
  };
}

interface Steady {
  readonly bytes: NonNullable<MeshBenchResult['bytesPerSecondPerSite']>;
  readonly rss: NonNullable<MeshBenchResult['rssMiBPerGateway']>;
  readonly cpu: NonNullable<MeshBenchResult['cpuPercentPerGateway']>;
}

async function steadyState(sites: readonly MeshSite[], measureS: number): Promise<Steady> {
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
  const rss = pids.map((pid) => memory(pid).rssBytes / 2 ** 20);
  return {
    bytes: { inMean: mean(inRates), outMean: mean(outRates), totalMean: mean(totals), totalMax: max(totals) },
    rss: { mean: mean(rss), max: max(rss) },
    cpu: { mean: mean(cpuPercent), max: max(cpuPercent) },
  };
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
  if (!Number.isInteger(count) || count < 3)
    throw new Error(`--sites: a whole number of at least 3, not ${String(values.sites)}`);
  const heartbeatMs = durationMs(String(values.heartbeat));
  const freshnessMs = 3 * heartbeatMs;
  const measureS = Number(values.measure);
  const ids = Array.from({ length: count }, (_, i) => `site-${String(i).padStart(2, '0')}`);
  log(`mesh benchmark: ${count} sites, heartbeat ${heartbeatMs} ms, freshness ${freshnessMs} ms`);
  const problems: PhaseProblem[] = [];
  const result: { -readonly [K in keyof MeshBenchResult]: MeshBenchResult[K] } = {
    generatedAt: new Date().toISOString(),
    sites: count,
    heartbeatMs,
    freshnessMs,
    problems,
  };
  /** Runs one phase; a failure is recorded, logged and ends the run (what was measured is kept). */
  const phase = async (name: string, fn: () => Promise<void>): Promise<boolean> => {
    try {
      await fn();
      return true;
    } catch (error) {
      problems.push({ phase: name, problem: message(error) });
      log(`${name}: ${message(error)}`);
      return false;
    }
  };
  const started = performance.now();
  let fleet: MeshFleet | undefined;
  // Stop every process on SIGINT/SIGTERM too (the finally below does not run when the process is
  // ended by a signal); during start-up startMeshFleet stops its own on failure.
  const onSignal = (signal: NodeJS.Signals): void => {
    log(`${signal}: stopping the mesh`);
    void (fleet?.stop() ?? Promise.resolve()).finally(() => process.exit(128 + (signal === 'SIGINT' ? 2 : 15)));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const startedOk = await phase('start', async () => {
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
        timings: {
          heartbeat: `${heartbeatMs}ms`,
          freshness: `${freshnessMs}ms`,
          maxModelsPerSite: 256,
          loop: '5s',
          loopTimeout: '20s',
          startTimeoutMs: 240_000,
        },
        startConcurrency: 4,
      });
    });
    if (!startedOk || fleet === undefined) return result;
    const running = fleet;
    const sites = ids.map((id) => running.site(id));
    result.startSeconds = (performance.now() - started) / 1000;
    const lastSpawn = max(sites.map((s) => s.startedAt ?? 0));
    log(`started ${count} gateways in ${result.startSeconds.toFixed(1)} s; waiting for every site to see every other fresh`);

    const converged = await phase('start-up convergence', async () => {
      const timeoutMs = 180_000;
      const log0 = startupLog(sites);
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const read = log0.read();
        if (read.first.size === count) {
          // From the last site's own "gateway listening" line (the same clock as the transitions).
          const lastListening = max(sites.map((s) => read.listening.get(s.id) ?? performance.timeOrigin + (s.readyAt ?? 0)));
          const times = [...read.first.values()].map((at) => at - lastListening);
          const fromReadyMs = max(times);
          const stillFresh = await Promise.all(
            sites.map(
              async (s) => (await sitesOf(s).catch(() => ({ sites: [] }))).sites.filter((r) => r.fresh).length === count - 1,
            ),
          );
          result.startupConvergence = {
            fromReadyMs,
            fromSpawnMs: fromReadyMs + (lastListening - (performance.timeOrigin + lastSpawn)),
            medianMs: median(times),
            heartbeats: fromReadyMs / heartbeatMs,
            stillFreshAfter: stillFresh.filter(Boolean).length,
          };
          log(
            `converged ${Math.round(fromReadyMs)} ms (${(fromReadyMs / heartbeatMs).toFixed(1)} heartbeats) after the last gateway started; ${stillFresh.filter(Boolean).length} of ${count} sites still saw every other fresh when asked`,
          );
          return;
        }
        if (performance.now() > deadline) {
          const counts = sites.filter((s) => !read.first.has(s.id)).map((s) => read.fresh.get(s.id) ?? 0);
          const missing = sites.filter((s) => !read.first.has(s.id)).map((s) => s.id);
          throw new Error(
            `${unfinished('see every other site fresh', { ms: [...read.first.values()], missing }, timeoutMs)}; at the end they saw a median of ${median(counts)} (least ${Math.min(...counts)}) of the ${count - 1} others fresh`,
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    });
    if (!converged) return result;

    const steady = await phase('steady state', async () => {
      log(`steady state: gossip bytes over ${measureS} s`);
      const measured = await steadyState(sites, measureS);
      result.bytesPerSecondPerSite = measured.bytes;
      result.rssMiBPerGateway = measured.rss;
      result.cpuPercentPerGateway = measured.cpu;
    });
    if (!steady) return result;

    const changedOk = await phase('convergence after a change', async () => {
      log('convergence after a change: site 0 starts serving brand-new');
      const first = sites[0]!;
      await first.setNodes([`${ids[0]}-n`, `${ids[0]}-new`]);
      await waitFor(
        async () => (await sitesOf(first)).site?.models.some((m) => m.id === 'brand-new') === true,
        'site 0 to publish brand-new',
        20_000,
        10,
      );
      const timeoutMs = 30_000;
      const change = await timesUntil(
        sites.slice(1),
        performance.now(),
        async (s) => (await rowOf(s, ids[0]!))?.models.some((m) => m.id === 'brand-new') === true,
        timeoutMs,
      );
      if (change.missing.length > 0) throw new Error(unfinished('learn brand-new', change, timeoutMs));
      result.changeConvergenceMs = { median: median(change.ms), max: max(change.ms) };
    });
    if (!changedOk) return result;

    await phase('fail closed', async () => {
      const victim = sites[count - 1]!;
      log(`time to fail closed: SIGKILL ${victim.id}`);
      await victim.stop('SIGKILL');
      const timeoutMs = 30_000;
      const failClosed = await timesUntil(
        sites.slice(0, -1),
        performance.now(),
        async (s) => (await rowOf(s, victim.id))?.fresh === false,
        timeoutMs,
      );
      if (failClosed.missing.length > 0) throw new Error(unfinished('mark the victim stale', failClosed, timeoutMs));
      result.failClosedMs = { median: median(failClosed.ms), max: max(failClosed.ms) };
    });
    return result;
  } finally {
    await fleet?.stop().catch((error: unknown) => log(`stopping the mesh: ${message(error)}`));
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

const NOT_MEASURED = 'not measured (see below)';

export function renderMeshMarkdown(r: MeshBenchResult): string {
  const per = r.bytesPerSecondPerSite;
  // Each site's steady-state traffic is dominated by the others' heartbeats it receives and
  // relays: linear in the number of sites at a fixed heartbeat, inversely so in the heartbeat.
  const perSitePerPeer = per === undefined ? undefined : per.totalMean / (r.sites - 1);
  const at1000 = (perPeer: number, heartbeatMs: number): number => perPeer * 999 * (r.heartbeatMs / heartbeatMs);
  const kib = (b: number): string => `${(b / 1024).toFixed(1)} KiB/s`;
  const pair = (x: { readonly median: number; readonly max: number } | undefined): string =>
    x === undefined ? NOT_MEASURED : `${Math.round(x.median)} / ${Math.round(x.max)} ms`;
  const cold = r.startupConvergence;
  const bound = CONVERGENCE_HEARTBEATS * r.heartbeatMs;
  const coldText =
    cold === undefined
      ? NOT_MEASURED
      : `${Math.round(cold.fromReadyMs)} ms = ${cold.heartbeats.toFixed(1)} heartbeats (${cold.fromReadyMs <= bound ? 'within' : '**over**'} the ${CONVERGENCE_HEARTBEATS}-heartbeat bound, ${bound} ms); from its spawn ${Math.round(cold.fromSpawnMs)} ms; median site ${Math.round(cold.medianMs)} ms; ${cold.stillFreshAfter} of ${r.sites} sites still saw every other fresh when asked right after`;
  return [
    `# Mesh benchmark (${r.generatedAt})`,
    '',
    `${r.sites} gateway processes on 127.0.0.1, one light simulated node each; heartbeat ${r.heartbeatMs} ms, freshness ${r.freshnessMs} ms; each site dials 3 others.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| start ${r.sites} gateways (4 at a time) | ${r.startSeconds === undefined ? NOT_MEASURED : `${r.startSeconds.toFixed(1)} s`} |`,
    `| cold-start convergence: last gateway started → every site sees every other fresh | ${coldText} |`,
    `| convergence after a change (median / max over ${r.sites - 1} sites) | ${pair(r.changeConvergenceMs)} |`,
    `| fail closed after a kill (median / max; bound = freshness ${r.freshnessMs} ms) | ${pair(r.failClosedMs)} |`,
    `| gossip bytes per site, in + out (mean / max) | ${per === undefined ? NOT_MEASURED : `${kib(per.totalMean)} / ${kib(per.totalMax)} (in ${kib(per.inMean)}, out ${kib(per.outMean)})`} |`,
    `| per site, per other site | ${perSitePerPeer === undefined ? NOT_MEASURED : `${perSitePerPeer.toFixed(0)} B/s`} |`,
    `| projection to 1,000 sites, heartbeat ${r.heartbeatMs} ms / 5 s (default) | ${perSitePerPeer === undefined ? NOT_MEASURED : `${kib(at1000(perSitePerPeer, r.heartbeatMs))} / ${kib(at1000(perSitePerPeer, 5_000))} per site`} |`,
    `| resident memory per gateway (mean / max) | ${r.rssMiBPerGateway === undefined ? NOT_MEASURED : `${r.rssMiBPerGateway.mean.toFixed(0)} / ${r.rssMiBPerGateway.max.toFixed(0)} MiB`} |`,
    `| CPU per gateway in steady state (mean / max, % of one core) | ${r.cpuPercentPerGateway === undefined ? NOT_MEASURED : `${r.cpuPercentPerGateway.mean.toFixed(1)} / ${r.cpuPercentPerGateway.max.toFixed(1)} %`} |`,
    '',
    ...(r.problems.length === 0
      ? []
      : [
          'Phases that did not finish (the run stopped there; every process was stopped):',
          '',
          ...r.problems.map((p) => `- ${p.phase}: ${p.problem}`),
          '',
        ]),
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
  // A phase that did not finish is reported above, and the run says so in its exit status.
  if (result.problems.length > 0) process.exitCode = 1;
}

if (import.meta.main) await mainMesh(process.argv.slice(2));
