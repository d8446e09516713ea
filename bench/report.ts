// The benchmark's results as one JSON document and one markdown page (bench/results/latest.*),
// and the issue's targets checked against them.

import type { ControlPlaneResult } from './control-plane.ts';
import type { LeanProcessResult } from './cli-start.ts';
import type { TailsResult } from './tails.ts';
import type { StreamsResult } from './streams-10k.ts';
import type { FirstChunkResult } from './first-chunk.ts';
import type { Measurement, TargetName } from './proxy-bench.ts';
import type { IndexUpdateResult, RouteDecisionResult } from './route-decision.ts';
import type { TenantAdmissionResult } from './tenant-admission.ts';
import { round } from './stats.ts';

export interface Machine {
  /** CPU busy on the machine just before the run, % of one core (other processes). */
  readonly backgroundCpuPercentAtStart: number;
  readonly cores: number;
  readonly cpuModel: string;
  readonly nodeVersion: string;
  readonly platform: string;
  readonly loadTool: string;
  readonly nginx: string | undefined;
}

export interface Settings {
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly sseChunks: number;
  readonly jsonAnswerBytes: number;
}

export interface AddedLatency {
  readonly workload: string;
  readonly concurrency: number;
  readonly target: TargetName;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface TargetCheck {
  readonly goal: string;
  readonly measured: string;
  /** undefined: not measured in this run. */
  readonly met: boolean | undefined;
}

export interface BenchReport {
  readonly generatedAt: string;
  readonly machine: Machine;
  readonly settings: Settings;
  readonly proxy: readonly Measurement[];
  readonly addedLatency: readonly AddedLatency[];
  readonly firstChunk: Readonly<Partial<Record<TargetName, FirstChunkResult>>>;
  readonly routeDecision: readonly RouteDecisionResult[];
  /** What keeping the model → nodes index up to date costs (absent in older reports). */
  readonly routeIndexUpdate?: IndexUpdateResult;
  /** Tenant admission per request: open gateway, one api key, 1,000 tenants × 100 keys (absent in older reports). */
  readonly tenantAdmission?: readonly TenantAdmissionResult[];
  readonly controlPlane: readonly ControlPlaneResult[];
  /** Issue 28: CLI start times, serve ready, idle RSS (bench/cli-start.ts). */
  readonly lean?: LeanProcessResult;
  /** Issue 28: open-loop tails with polls running / paused (bench/tails.ts). */
  readonly tails?: TailsResult;
  /** Issue 28: ten thousand concurrent SSE streams (bench/streams-10k.ts, `--only streams`). */
  readonly streams?: StreamsResult;
  readonly targets: readonly TargetCheck[];
  readonly runSeconds: number;
  readonly notes: readonly string[];
}

/** Each proxy row minus the direct row of the same workload and concurrency. */
export function addedLatency(rows: readonly Measurement[]): AddedLatency[] {
  const out: AddedLatency[] = [];
  for (const row of rows) {
    if (row.target === 'direct') continue;
    const direct = rows.find((d) => d.target === 'direct' && d.workload === row.workload && d.concurrency === row.concurrency);
    if (direct === undefined) continue;
    out.push({
      workload: row.workload,
      concurrency: row.concurrency,
      target: row.target,
      p50Ms: row.p50Ms - direct.p50Ms,
      p99Ms: row.p99Ms - direct.p99Ms,
    });
  }
  return out;
}

const fmt = (value: number | undefined, unit = ''): string => (value === undefined ? '—' : `${round(value)}${unit}`);

export function checkTargets(
  rows: readonly Measurement[],
  added: readonly AddedLatency[],
  routes: readonly RouteDecisionResult[],
  control: ControlPlaneResult | undefined,
  runSeconds: number,
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const a of added.filter((x) => x.target === 'switchyard' && x.concurrency === 1)) {
    checks.push({ goal: `added latency, c=1, ${a.workload}: p50 ≤ 0.3 ms`, measured: fmt(a.p50Ms, ' ms'), met: a.p50Ms <= 0.3 });
    checks.push({ goal: `added latency, c=1, ${a.workload}: p99 ≤ 2 ms`, measured: fmt(a.p99Ms, ' ms'), met: a.p99Ms <= 2 });
  }
  for (const workload of ['json', 'sse', 'body10k']) {
    const ours = rows.find((r) => r.target === 'switchyard' && r.workload === workload && r.concurrency === 64);
    const nginx = rows.find((r) => r.target === 'nginx' && r.workload === workload && r.concurrency === 64);
    if (ours === undefined) continue;
    const goal = `throughput, c=64, ${workload}: ≥ 0.5 × nginx${workload === 'body10k' ? ' (not an issue target)' : ''}`;
    if (nginx === undefined) {
      checks.push({ goal, measured: 'nginx not installed', met: undefined });
      continue;
    }
    const ratio = ours.requestsPerSecond / nginx.requestsPerSecond;
    checks.push({
      goal,
      measured: `${round(ratio)} × (${round(ours.requestsPerSecond)} vs ${round(nginx.requestsPerSecond)} req/s)`,
      met: ratio >= 0.5,
    });
  }
  // The target is the scheduler's decision: least-in-flight, through the index, 50 models per node.
  const big = routes.filter(
    (r) =>
      r.nodes === 1000 &&
      (r.policy ?? 'least-in-flight') === 'least-in-flight' &&
      (r.path ?? 'indexed') === 'indexed' &&
      (r.modelsPerNode ?? 50) === 50 &&
      r.slots === undefined,
  );
  if (big.length > 0) {
    const worst = big.reduce((a, b) => (b.p50Us > a.p50Us ? b : a));
    checks.push({
      goal: 'routing decision, 1,000 nodes × 50 models: p50 ≤ 20 µs',
      measured: `${fmt(worst.p50Us, ' µs')} (${worst.fleet})`,
      met: worst.p50Us <= 20,
    });
  }
  if (control !== undefined) {
    checks.push({
      goal: `RSS with ${control.nodes} nodes polled every ${control.intervalS} s: ≤ 150 MB`,
      measured: `${fmt(control.lifetimePeakRssMB, ' MB')} peak (${fmt(control.rssMB, ' MB')} steady)`,
      met: control.lifetimePeakRssMB <= 150,
    });
  }
  checks.push({ goal: 'whole run < 5 min', measured: `${Math.round(runSeconds)} s`, met: runSeconds < 300 });
  return checks;
}

const TARGET_ORDER: readonly TargetName[] = ['direct', 'switchyard', 'candidate', 'bare', 'nginx'];

/** The fixed targets first, then the workers rows (switchyard-wN before nginx-wN). */
function targetRank(target: TargetName): number {
  const at = TARGET_ORDER.indexOf(target);
  return at >= 0 ? at : TARGET_ORDER.length + (target.startsWith('nginx') ? 1 : 0);
}

export function renderMarkdown(r: BenchReport): string {
  const out: string[] = [];
  const m = r.machine;
  out.push(`# Switchyard benchmark — ${r.generatedAt}`, '');
  out.push(
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.platform}, Node ${m.nodeVersion}. Load: ${m.loadTool}. ` +
      `nginx: ${m.nginx ?? 'not installed (no nginx rows)'}. Background load at start: ${Math.round(m.backgroundCpuPercentAtStart)}% of a core.`,
  );
  out.push(
    `Each cell: ${r.settings.durationS} s of load after ${r.settings.warmupS} s of warm-up, targets alternating, ` +
      `${r.settings.rounds} round(s) (median). Whole run: ${Math.round(r.runSeconds)} s.`,
    '',
  );
  out.push('## Targets', '', '| goal | measured | met |', '|---|---|---|');
  for (const t of r.targets)
    out.push(`| ${t.goal} | ${t.measured} | ${t.met === undefined ? 'n/a' : t.met ? 'yes' : '**no**'} |`);
  out.push('', '## Proxy: throughput and latency', '');
  out.push(
    '| workload | conc. | target | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | proxy CPU µs/req | proxy CPU % | proxy peak RSS MB | upstream CPU % | load gen CPU % | other load % | errors |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const rows = [...r.proxy].sort(
    (a, b) =>
      a.workload.localeCompare(b.workload) || a.concurrency - b.concurrency || targetRank(a.target) - targetRank(b.target),
  );
  for (const row of rows) {
    const added = r.addedLatency.find(
      (a) => a.workload === row.workload && a.concurrency === row.concurrency && a.target === row.target,
    );
    out.push(
      `| ${row.workload} | ${row.concurrency} | ${row.target} | ${Math.round(row.requestsPerSecond)} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ` +
        `${fmt(added?.p50Ms)} | ${fmt(added?.p99Ms)} | ${fmt(row.proxyCpuUsPerRequest)} | ${fmt(row.proxyCpuPercent)} | ` +
        `${fmt(row.proxyPeakRssMB)} | ${fmt(row.upstreamCpuPercent)} | ${fmt(row.loadGeneratorCpuPercent)} | ${fmt(row.otherCpuPercent)} | ${row.errors} |`,
    );
  }
  const direct = r.firstChunk.direct;
  out.push('', `## SSE time to first chunk (concurrency 1, ${r.settings.sseChunks}-chunk stream)`, '');
  out.push('| target | p50 ms | p99 ms | added p50 ms | added p99 ms | samples |', '|---|---:|---:|---:|---:|---:|');
  for (const name of TARGET_ORDER) {
    const fc = r.firstChunk[name];
    if (fc === undefined) continue;
    const addP50 = name === 'direct' || direct === undefined ? undefined : fc.p50Ms - direct.p50Ms;
    const addP99 = name === 'direct' || direct === undefined ? undefined : fc.p99Ms - direct.p99Ms;
    out.push(`| ${name} | ${fmt(fc.p50Ms)} | ${fmt(fc.p99Ms)} | ${fmt(addP50)} | ${fmt(addP99)} | ${fc.samples} |`);
  }
  if (r.routeDecision.length > 0) {
    out.push('', '## Routing decision (default filters + selection policy)', '');
    out.push(
      '| policy | path | nodes | models/node | fleet | p50 µs | p99 µs | mean µs | calls |',
      '|---|---|---:|---:|---|---:|---:|---:|---:|',
    );
    for (const d of r.routeDecision) {
      out.push(
        `| ${d.policy ?? 'least-in-flight'} | ${d.path ?? 'indexed'} | ${d.nodes} | ${d.modelsPerNode ?? 50} | ${d.fleet}${d.slots === undefined ? '' : `, ${d.slots} slots (${d.kv ?? 'per-slot'})`} | ${fmt(d.p50Us)} | ${fmt(d.p99Us)} | ${fmt(d.meanUs)} | ${d.calls} |`,
      );
    }
    const u = r.routeIndexUpdate;
    if (u !== undefined) {
      out.push(
        '',
        `Index upkeep at ${u.nodes} nodes × ${u.modelsPerNode} models: building one model's entry ${fmt(u.buildMs, ' ms')}; ` +
          `a decision right after one node's view changed ${fmt(u.oneNodeChangedUs, ' µs')} p50 (${fmt(u.steadyUs, ' µs')} with nothing changed).`,
      );
    }
  }
  const tenants = r.tenantAdmission ?? [];
  if (tenants.length > 0) {
    const oneKey = tenants.find((t) => t.setup === 'one api key');
    out.push('', '## Tenant admission (key → tenant, model scope, ledger admit + settle)', '');
    out.push('| setup | p50 µs | p99 µs | mean µs | p50 × one api key | calls |', '|---|---:|---:|---:|---:|---:|');
    for (const t of tenants) {
      const ratio = oneKey === undefined || oneKey.p50Us === 0 ? undefined : t.p50Us / oneKey.p50Us;
      out.push(`| ${t.setup} | ${fmt(t.p50Us)} | ${fmt(t.p99Us)} | ${fmt(t.meanUs)} | ${fmt(ratio, '×')} | ${t.calls} |`);
    }
  }
  const first = r.controlPlane[0];
  if (first !== undefined) {
    out.push(
      '',
      `## Control plane: ${first.nodes} nodes × ${first.modelsPerNode} models, health and discovery every ${first.intervalS} s, no client traffic`,
      '',
    );
    out.push(
      '| gateway | CPU % | CPU µs per poll | RSS MB | window peak MB | lifetime peak MB | heap in use MB, low–high | health probes/s | model listings/s | new connections/s | healthy | with models | other load % |',
    );
    out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of r.controlPlane) {
      const heap = c.heapUsedMinMB === undefined ? '—' : `${fmt(c.heapUsedMinMB)}–${fmt(c.heapUsedMaxMB)}`;
      out.push(
        `| ${c.label} | ${fmt(c.cpuPercent)} | ${fmt(c.cpuUsPerPoll)} | ${fmt(c.rssMB)} | ${fmt(c.windowPeakRssMB)} | ${fmt(c.lifetimePeakRssMB)} | ${heap} | ` +
          `${fmt(c.healthPerSecond)} | ${fmt(c.modelsPerSecond)} | ${fmt(c.connectionsPerSecond)} | ${c.healthyNodes} | ${c.nodesWithModels} | ${fmt(c.otherCpuPercent)} |`,
      );
    }
    if (r.controlPlane.some((c) => c.underScale.length > 0)) {
      out.push(
        '',
        'Then JSON requests through the same gateway, still polling: one more node (the upstream) serves the model, the 1,000 do not.',
        '',
      );
      out.push(
        '| gateway | conc. | req/s | p50 ms | p99 ms | errors | one-node p50 ms (proxy table) |',
        '|---|---:|---:|---:|---:|---:|---:|',
      );
      for (const c of r.controlPlane) {
        for (const u of c.underScale) {
          const oneNode = r.proxy.find((p) => p.target === c.label && p.workload === 'json' && p.concurrency === u.concurrency);
          out.push(
            `| ${c.label} | ${u.concurrency} | ${Math.round(u.requestsPerSecond)} | ${fmt(u.p50Ms)} | ${fmt(u.p99Ms)} | ${u.errors} | ${fmt(oneNode?.p50Ms)} |`,
          );
        }
      }
    }
  }
  if (r.notes.length > 0) out.push('', '## Notes', '', ...r.notes.map((n) => `- ${n}`));
  return `${out.join('\n')}\n`;
}
