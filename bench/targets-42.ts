// The targets of issue 42 (performance 4), each with its figure from this run and met / missed:
// throughput and CPU per request against the bare stack proxy, the side-by-side rows
// (bench/side-by-side.ts: added latency against the bare proxy and the Node peer at every
// concurrency), memory, check-config and the other CLI commands. The footprint row is issue 39's
// (bench/footprint-report.ts, in the same table). A target this run did not measure shows n/a,
// with what would measure it.

import type { LeanProcessResult } from './cli-start.ts';
import type { ControlPlaneResult } from './control-plane.ts';
import { footprintExtrasCheck, type FootprintResult } from './footprint-report.ts';
import type { Measurement, TargetName } from './proxy-bench.ts';
import type { TargetCheck } from './report.ts';
import { NODE_PEERS, type SideBySideResult } from './side-by-side.ts';
import { round } from './stats.ts';
import { againstBare } from './targets-28.ts';
import { projectionSummary, type WorkersProjection } from './workers-projection.ts';

export interface Issue42Input {
  readonly proxy: readonly Measurement[];
  readonly sideBySide: SideBySideResult | undefined;
  readonly control: ControlPlaneResult | undefined;
  readonly lean: LeanProcessResult | undefined;
  /** bench/workers-projection.ts (with --only proxy and --workers > 1). */
  readonly workers?: WorkersProjection | undefined;
  /** bench/footprint-report.ts (--only footprint): the tenant, tracing and mesh rows' extras. */
  readonly footprint?: FootprintResult | undefined;
}

/** Switchyard's added latency may be this many times the bare proxy's. */
const VS_BARE = 1.25;
/** ≤ 1 ms added p99 at c ≤ 16 is judged only where the bare proxy itself adds ≤ 0.5 ms (a quiet machine). */
const QUIET_BARE_P99_MS = 0.5;

const na = (goal: string, why: string): TargetCheck => ({ goal, measured: why, met: undefined });

function sideBySide(result: SideBySideResult | undefined): TargetCheck[] {
  if (result === undefined)
    return [na('#42 side by side (22 ms upstream, c = 1 / 4 / 16 / 64): added p50 and p99', 'not measured (--only side)')];
  const checks: TargetCheck[] = [];
  const added = (target: TargetName, c: number): { p50Ms: number; p99Ms: number } | undefined =>
    result.added.find((a) => a.target === target && a.concurrency === c);
  for (const c of result.concurrencies) {
    const ours = added('switchyard', c);
    const bare = added('bare', c);
    for (const p of ['p50', 'p99'] as const) {
      const goal = `#42 side by side, c=${c}: Switchyard's added ${p} ≤ ${VS_BARE} × the bare proxy's`;
      if (ours === undefined || bare === undefined) {
        checks.push(na(goal, 'no row'));
        continue;
      }
      const o = p === 'p50' ? ours.p50Ms : ours.p99Ms;
      const b = p === 'p50' ? bare.p50Ms : bare.p99Ms;
      // A negative added figure is direct's own spread above the proxy's: noise, no ratio to judge by.
      if (b < 0)
        checks.push(na(goal, `not judged: the bare proxy's added ${p} is ${round(b)} ms (noise); Switchyard ${round(o)} ms`));
      else checks.push({ goal, measured: `${round(o)} vs ${round(b)} ms`, met: o <= VS_BARE * b });
    }
    if (c <= 16) {
      const goal = `#42 side by side, c=${c}: added p99 ≤ 1 ms where the bare proxy adds ≤ ${QUIET_BARE_P99_MS} ms`;
      if (ours === undefined || bare === undefined) checks.push(na(goal, 'no row'));
      else if (bare.p99Ms > QUIET_BARE_P99_MS || bare.p99Ms < 0)
        checks.push(
          na(
            goal,
            `not judged: the bare proxy added ${round(bare.p99Ms)} ms (machine not quiet, or noise); Switchyard ${round(ours.p99Ms)} ms`,
          ),
        );
      else checks.push({ goal, measured: `${round(ours.p99Ms)} ms`, met: ours.p99Ms <= 1 });
    }
    for (const peer of NODE_PEERS) {
      const goal = `#42 side by side, c=${c}: added p50 and p99 below ${peer}'s (a Node peer)`;
      const theirs = added(peer, c);
      if (ours === undefined) checks.push(na(goal, 'no Switchyard row'));
      else if (theirs === undefined) checks.push(na(goal, `${peer} not measured (npm run bench -- --install-peers)`));
      else
        checks.push({
          goal,
          measured: `${round(ours.p50Ms)} / ${round(ours.p99Ms)} vs ${round(theirs.p50Ms)} / ${round(theirs.p99Ms)} ms`,
          met: ours.p50Ms < theirs.p50Ms && ours.p99Ms < theirs.p99Ms,
        });
    }
  }
  return checks;
}

function memory(input: Issue42Input): TargetCheck[] {
  const { lean, control, proxy } = input;
  const checks: TargetCheck[] = [];
  const idleGoal = '#42 idle serve, one node, no [mesh]: RSS ≤ 80 MB';
  checks.push(
    lean === undefined
      ? na(idleGoal, 'not measured (--only lean)')
      : { goal: idleGoal, measured: `${round(lean.idleServeRssMB)} MB`, met: lean.idleServeRssMB <= 80 },
  );
  const fleetGoal = '#42 1,000 nodes × 50 models polled every 2 s: RSS ≤ 150 MB';
  const latencyGoal = '#42 1,000 nodes polled: added latency at c=1 over a one-node gateway ≤ 0.5 ms (p50)';
  if (control === undefined) checks.push(na(fleetGoal, 'not measured (--only control)'), na(latencyGoal, 'not measured'));
  else {
    checks.push({
      goal: fleetGoal,
      measured: `${round(control.lifetimePeakRssMB)} MB peak (${round(control.rssMB)} MB steady)`,
      met: control.lifetimePeakRssMB <= 150,
    });
    const big = control.underScale.find((r) => r.concurrency === 1);
    const one = proxy.find((r) => r.target === 'switchyard' && r.workload === 'json' && r.concurrency === 1);
    if (big === undefined || one === undefined) checks.push(na(latencyGoal, 'needs the control and proxy rows at c=1'));
    else {
      const more = big.p50Ms - one.p50Ms;
      checks.push({
        goal: latencyGoal,
        measured: `${round(more)} ms (${round(big.p50Ms)} vs ${round(one.p50Ms)} ms)`,
        met: more <= 0.5,
      });
    }
  }
  const peaks = proxy.filter((r) => r.target === 'switchyard' && r.concurrency === 64 && r.proxyPeakRssMB !== undefined);
  const loadGoal = '#42 RSS under c=64 load ≤ 120 MB';
  if (peaks.length === 0) checks.push(na(loadGoal, 'not measured (--only proxy)'));
  else {
    const peak = Math.max(...peaks.map((r) => r.proxyPeakRssMB ?? 0));
    checks.push({ goal: loadGoal, measured: `${round(peak)} MB`, met: peak <= 120 });
  }
  checks.push(na('#42 10-minute soak: flat and ≤ 120 MB', '`npm run soak -- --minutes 10` (not part of npm run bench)'));
  return checks;
}

function cli(lean: LeanProcessResult | undefined): TargetCheck[] {
  if (lean === undefined) return [na('#42 check-config ≤ 150 ms; every other CLI command ≤ 75 ms', 'not measured (--only lean)')];
  return lean.cli
    .filter((row) => !row.command.startsWith('node '))
    .map((row) => {
      const limit = row.command.startsWith('check-config') ? 150 : 75;
      return {
        goal: `#42 \`switchyard ${row.command}\` ≤ ${limit} ms`,
        measured: `${round(row.medianMs)} ms`,
        met: row.medianMs <= limit,
      };
    });
}

const WORKERS_GOAL = '#42 workers: what bounds `[server] workers = 2` on 2 cores, a 16-core projection';

/** A target to say, not a bound to meet: met once the cell was measured and the model projected. */
function workersRow(projection: WorkersProjection | undefined): TargetCheck {
  if (projection === undefined) return na(WORKERS_GOAL, 'not measured (--only proxy with --workers 2)');
  return { goal: WORKERS_GOAL, measured: projectionSummary(projection), met: true };
}

export function issue42Checks(input: Issue42Input): TargetCheck[] {
  return [
    ...againstBare(input.proxy, '#42', 1.5),
    ...sideBySide(input.sideBySide),
    ...memory(input),
    ...cli(input.lean),
    footprintExtrasCheck(input.footprint),
    workersRow(input.workers),
  ];
}
