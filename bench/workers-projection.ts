// What bounds `[server] workers = N`, and what a host with more cores would gain: the gateway's
// CPU per request split by thread (from /proc/<pid>/task/<tid>/stat, outside the process: the
// owner thread, the request worker threads, V8's helper threads, the rest), with how long each
// thread waited for a CPU while runnable (/proc/…/schedstat: a thread that waits on the run queue
// is starved of CPU, one that sleeps has nothing to do), and the load generator's and the
// upstream's CPU per request, all in one wrk cell (JSON, c=64) for workers = 1 and = N. The
// projection is a model over those inputs (projectWorkers, pure):
//
//   throughput(C cores, n workers) = min( n / worker µs,           each request thread is one loop
//                                         1 / owner µs,            every admission, event and metric is one owner's
//                                         C / total µs )           the host's CPU, shared with the load generator and upstream
//
// with n the fewest request threads (2 ≤ n ≤ C) that reach the lower of the last two (so the
// first never binds: the request threads' CPU is part of the host's), and the same without the
// load generator and the upstream (a host that runs the gateway alone). Its limits: per-request CPU measured at n = 2 on this machine is taken
// as constant in n (more workers batch fewer messages per wake-up on the owner; memory bandwidth,
// the kernel's SO_REUSEPORT spread and cross-core cache traffic are not modelled), and figures
// measured on a loaded machine are inflated (a thread sharing a core loses its caches).

import { readFileSync, readdirSync } from 'node:fs';
import { runLoad, type LoadTool } from './load.ts';
import { machineBusySeconds, sample, type ProcessGroup } from './proc-stats.ts';
import { proxyGatewayConfig, startGateway } from './processes.ts';
import { round } from './stats.ts';

export type ThreadRole = 'owner' | 'workers' | 'v8 helpers' | 'other';
const ROLES: readonly ThreadRole[] = ['owner', 'workers', 'v8 helpers', 'other'];

/** One thread's CPU seconds and run-queue wait (seconds runnable but not running). */
interface ThreadTimes {
  readonly role: ThreadRole;
  readonly cpuS: number;
  readonly waitS: number;
}

/** Pure: a thread's role from its name (Linux truncates it to 15 characters) and whether it is the process's first. */
export function roleOf(name: string, isMain: boolean): ThreadRole {
  if (isMain) return 'owner';
  if (name.startsWith('switchyard-work')) return 'workers';
  if (name.startsWith('V8') || name.startsWith('v8')) return 'v8 helpers';
  return 'other';
}

function threadTimes(pid: number, ticksPerSecond: number): Map<number, ThreadTimes> {
  const out = new Map<number, ThreadTimes>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const schedstat = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(' ');
      out.set(Number(tid), {
        role: roleOf(name, Number(tid) === pid),
        cpuS: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond,
        waitS: Number(schedstat[1]) / 1e9,
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** Per role: µs of CPU per request, % of one core, and the share of the cell its threads waited for a CPU (mean per thread). */
export interface RoleFigures {
  readonly role: ThreadRole;
  readonly threads: number;
  readonly usPerRequest: number;
  readonly corePercent: number;
  readonly runQueueWaitPercent: number;
}

export interface WorkersCell {
  readonly workers: number;
  readonly requestsPerSecond: number;
  readonly roles: readonly RoleFigures[];
  readonly gatewayUsPerRequest: number;
  readonly gatewayCorePercent: number;
  readonly loadGeneratorUsPerRequest: number;
  readonly upstreamUsPerRequest: number;
  /** Machine CPU besides these three, % of one core (noise). */
  readonly otherLoadPercent: number;
}

export interface ProjectionOptions {
  readonly workers: number;
  readonly tool: LoadTool;
  readonly upstreamUrl: string;
  readonly upstream: ProcessGroup;
  readonly bodyFile: string;
  readonly durationS: number;
  readonly warmupS: number;
  readonly ticksPerSecond: number;
  readonly nodeFlags: readonly string[];
  readonly log: (line: string) => void;
}

/** One wrk cell (JSON, c=64) against a gateway with `workers` request threads, its CPU split by thread. */
export async function measureWorkersCell(options: ProjectionOptions, workers: number): Promise<WorkersCell> {
  const gateway = await startGateway(proxyGatewayConfig(options.upstreamUrl, workers), { nodeFlags: options.nodeFlags });
  try {
    const spec = { url: `${gateway.url}/v1/chat/completions`, bodyFile: options.bodyFile, connections: 64 };
    if (options.warmupS > 0) await runLoad(options.tool, { ...spec, durationS: options.warmupS });
    const ticks = options.ticksPerSecond;
    const before = threadTimes(gateway.pid, ticks);
    const upstreamBefore = sample(options.upstream, ticks);
    const machineBefore = machineBusySeconds(ticks);
    const load = await runLoad(options.tool, { ...spec, durationS: options.durationS });
    const machineAfter = machineBusySeconds(ticks);
    const upstreamAfter = sample(options.upstream, ticks);
    const after = threadTimes(gateway.pid, ticks);
    const wallS = (upstreamAfter.atMs - upstreamBefore.atMs) / 1000;
    const requests = Math.max(1, load.requests);
    const perRole = new Map<ThreadRole, { threads: number; cpuS: number; waitS: number }>();
    for (const [tid, now] of after) {
      const then = before.get(tid);
      const cpuS = now.cpuS - (then?.cpuS ?? 0);
      const waitS = now.waitS - (then?.waitS ?? 0);
      const sum = perRole.get(now.role) ?? { threads: 0, cpuS: 0, waitS: 0 };
      perRole.set(now.role, { threads: sum.threads + 1, cpuS: sum.cpuS + cpuS, waitS: sum.waitS + waitS });
    }
    const roles = ROLES.flatMap((role) => {
      const sum = perRole.get(role);
      if (sum === undefined) return [];
      return [
        {
          role,
          threads: sum.threads,
          usPerRequest: (sum.cpuS / requests) * 1e6,
          corePercent: (sum.cpuS / wallS) * 100,
          runQueueWaitPercent: (sum.waitS / sum.threads / wallS) * 100,
        },
      ];
    });
    const gatewayS = [...perRole.values()].reduce((s, r) => s + r.cpuS, 0);
    const upstreamS = upstreamAfter.cpuSeconds - upstreamBefore.cpuSeconds;
    return {
      workers,
      requestsPerSecond: load.requestsPerSecond,
      roles,
      gatewayUsPerRequest: (gatewayS / requests) * 1e6,
      gatewayCorePercent: (gatewayS / wallS) * 100,
      loadGeneratorUsPerRequest: (load.loadGeneratorCpuSeconds / requests) * 1e6,
      upstreamUsPerRequest: (upstreamS / requests) * 1e6,
      otherLoadPercent: Math.max(
        0,
        ((machineAfter - machineBefore - gatewayS - upstreamS - load.loadGeneratorCpuSeconds) / wallS) * 100,
      ),
    };
  } finally {
    await gateway.stop();
  }
}

/** The model's inputs, µs of CPU per request (from the workers = N cell; `single` from workers = 1). */
export interface ProjectionInputs {
  /** The owner thread: admission, the events re-emitted, metrics, and its share of the control plane. */
  readonly ownerUs: number;
  /** The request worker threads together (the request path, both ends of every message). */
  readonly workersUs: number;
  /** V8's helper threads (concurrent GC, compilation) and the rest of the process's threads. */
  readonly helpersUs: number;
  readonly loadGeneratorUs: number;
  readonly upstreamUs: number;
  /** workers = 1: the main thread (request path and control plane in one loop), and the whole process. */
  readonly single: { readonly mainUs: number; readonly processUs: number } | undefined;
}

export type ProjectionBound = 'owner thread' | 'host CPU';

export interface ProjectionRow {
  readonly cores: number;
  /** The best `[server] workers` for this host (the fewest that reach the bound). */
  readonly workers: number;
  readonly requestsPerSecond: number;
  readonly bound: ProjectionBound;
  /** The same host running the gateway alone (load generator and upstream elsewhere). */
  readonly aloneWorkers: number;
  readonly aloneRequestsPerSecond: number;
  readonly aloneBound: ProjectionBound;
  /** workers = 1 on this host: min(one loop, the host's CPU); undefined without the one-worker cell. */
  readonly singleRequestsPerSecond: number | undefined;
}

/** Workers mode has at least 2 request threads (`workers = 1` is the one-thread gateway, projected apart). */
const MIN_WORKERS = 2;

function bestOf(
  cores: number,
  inputs: ProjectionInputs,
  withClientAndUpstream: boolean,
): { workers: number; rps: number; bound: ProjectionBound } {
  const totalUs =
    inputs.ownerUs +
    inputs.workersUs +
    inputs.helpersUs +
    (withClientAndUpstream ? inputs.loadGeneratorUs + inputs.upstreamUs : 0);
  const owner = 1e6 / inputs.ownerUs;
  const host = (cores * 1e6) / totalUs;
  const cap = Math.min(owner, host);
  // The fewest request threads that reach the cap, at least 2, at most one per core.
  const workers = Math.min(cores, Math.max(MIN_WORKERS, Math.ceil((cap * inputs.workersUs) / 1e6 - 1e-9)));
  // n / request-thread µs never binds below the cap: the request threads' own CPU is part of the host's.
  return { workers, rps: Math.min(cap, (workers * 1e6) / inputs.workersUs), bound: owner <= host ? 'owner thread' : 'host CPU' };
}

/** Pure: the model above for each core count. */
export function projectWorkers(inputs: ProjectionInputs, coreCounts: readonly number[]): ProjectionRow[] {
  return coreCounts.map((cores) => {
    const shared = bestOf(cores, inputs, true);
    const alone = bestOf(cores, inputs, false);
    const single = inputs.single;
    const singleRps =
      single === undefined
        ? undefined
        : Math.min(1e6 / single.mainUs, (cores / (single.processUs + inputs.loadGeneratorUs + inputs.upstreamUs)) * 1e6);
    return {
      cores,
      workers: shared.workers,
      requestsPerSecond: shared.rps,
      bound: shared.bound,
      aloneWorkers: alone.workers,
      aloneRequestsPerSecond: alone.rps,
      aloneBound: alone.bound,
      singleRequestsPerSecond: singleRps,
    };
  });
}

/** Pure: the model's inputs from the two cells. */
export function inputsOf(many: WorkersCell, one: WorkersCell | undefined): ProjectionInputs {
  const us = (cell: WorkersCell, role: ThreadRole): number => cell.roles.find((r) => r.role === role)?.usPerRequest ?? 0;
  return {
    ownerUs: us(many, 'owner'),
    workersUs: us(many, 'workers'),
    helpersUs: us(many, 'v8 helpers') + us(many, 'other'),
    loadGeneratorUs: many.loadGeneratorUsPerRequest,
    upstreamUs: many.upstreamUsPerRequest,
    single: one === undefined ? undefined : { mainUs: us(one, 'owner'), processUs: one.gatewayUsPerRequest },
  };
}

export interface WorkersProjection {
  readonly cells: readonly WorkersCell[];
  readonly inputs: ProjectionInputs;
  readonly rows: readonly ProjectionRow[];
  /** What bounded workers = N in the measured cell, in words. */
  readonly boundHere: string;
}

export const PROJECTED_CORES: readonly number[] = [2, 4, 8, 16];

/** Pure: what bounded the measured cell — CPU the threads waited for (run queue), or the owner, or the request threads. */
export function boundHere(cell: WorkersCell, cores: number): string {
  const role = (name: ThreadRole): RoleFigures | undefined => cell.roles.find((r) => r.role === name);
  const owner = role('owner');
  const workers = role('workers');
  const machine =
    cell.gatewayCorePercent + ((cell.loadGeneratorUsPerRequest + cell.upstreamUsPerRequest) * cell.requestsPerSecond) / 1e4;
  const busy = machine + cell.otherLoadPercent;
  const parts = [
    `the machine's ${cores} cores ${round(busy)} % busy (gateway ${round(cell.gatewayCorePercent)} %, load generator and upstream ${round(machine - cell.gatewayCorePercent)} %, other ${round(cell.otherLoadPercent)} %)`,
    `request threads ${round(workers?.corePercent ?? 0)} % of a core for ${workers?.threads ?? 0}, waiting for a CPU ${round(workers?.runQueueWaitPercent ?? 0)} % of the time each`,
    `owner ${round(owner?.corePercent ?? 0)} %, waiting ${round(owner?.runQueueWaitPercent ?? 0)} %`,
  ];
  const verdict =
    busy >= cores * 100 * 0.9
      ? 'host CPU: every core busy, the threads wait on the run queue, not on each other'
      : (owner?.corePercent ?? 0) >= 90
        ? 'the owner thread (one loop for every admission)'
        : 'neither the cores nor the owner are full: a wait (messages, upstream, load generator)';
  return `${verdict} — ${parts.join('; ')}`;
}

export async function runWorkersProjection(options: ProjectionOptions, cores: number): Promise<WorkersProjection> {
  const one = await measureWorkersCell(options, 1);
  const many = await measureWorkersCell(options, options.workers);
  const inputs = inputsOf(many, one);
  return { cells: [one, many], inputs, rows: projectWorkers(inputs, PROJECTED_CORES), boundHere: boundHere(many, cores) };
}

/** Markdown: the measured inputs, what bounded the cell, and the projection. */
export function renderWorkersProjection(p: WorkersProjection | undefined): string {
  if (p === undefined) return '';
  const lines = [
    '',
    '## `[server] workers`: CPU per request by thread, and a projection (bench/workers-projection.ts)',
    '',
    'JSON at c=64, wrk; per-thread CPU from /proc/<pid>/task/*/stat, run-queue wait from …/schedstat.',
    '',
    '| workers | req/s | thread | threads | µs/req | % of a core | waited for a CPU % | load gen µs/req | upstream µs/req | other load % |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const cell of p.cells)
    for (const r of cell.roles)
      lines.push(
        `| ${cell.workers} | ${round(cell.requestsPerSecond)} | ${r.role} | ${r.threads} | ${round(r.usPerRequest)} | ${round(r.corePercent)} | ${round(r.runQueueWaitPercent)} | ${round(cell.loadGeneratorUsPerRequest)} | ${round(cell.upstreamUsPerRequest)} | ${round(cell.otherLoadPercent)} |`,
      );
  const i = p.inputs;
  lines.push(
    '',
    `What bounded it here: ${p.boundHere}.`,
    '',
    `Model inputs (µs of CPU per request): owner ${round(i.ownerUs)}, request threads ${round(i.workersUs)}, V8 helpers and other threads ${round(i.helpersUs)}, load generator ${round(i.loadGeneratorUs)}, upstream ${round(i.upstreamUs)}` +
      (i.single === undefined
        ? '.'
        : `; workers = 1: main thread ${round(i.single.mainUs)}, process ${round(i.single.processUs)}.`),
    'throughput(C, n) = min(n / request-thread µs, 1 / owner µs, C / total µs), n the fewest request threads (2 ≤ n ≤ C) that reach the lower of the last two; "alone" leaves the load generator and the upstream off the host; per-request CPU taken as constant in n, measured on this machine under the other load shown.',
    '',
    '| cores | workers | req/s (with load gen + upstream) | bound | alone: workers | alone: req/s | alone: bound | workers = 1 req/s |',
    '|---:|---:|---:|---|---:|---:|---|---:|',
    ...p.rows.map(
      (r) =>
        `| ${r.cores} | ${r.workers} | ${round(r.requestsPerSecond)} | ${r.bound} | ${r.aloneWorkers} | ${round(r.aloneRequestsPerSecond)} | ${r.aloneBound} | ${r.singleRequestsPerSecond === undefined ? '—' : round(r.singleRequestsPerSecond)} |`,
    ),
    '',
  );
  return lines.join('\n');
}

/** The one line of issue 42's targets table. */
export function projectionSummary(p: WorkersProjection): string {
  const at = (cores: number): ProjectionRow | undefined => p.rows.find((r) => r.cores === cores);
  const two = at(2);
  const sixteen = at(16);
  const i = p.inputs;
  const row = (r: ProjectionRow | undefined): string =>
    r === undefined
      ? 'n/a'
      : `${round(r.requestsPerSecond)} req/s with ${r.workers} workers (${r.bound}); alone ${round(r.aloneRequestsPerSecond)} (${r.aloneBound})`;
  return (
    `on 2 cores: ${p.boundHere.split(' — ')[0]}; µs/req owner ${round(i.ownerUs)}, request threads ${round(i.workersUs)}, V8 helpers ${round(i.helpersUs)}, load gen + upstream ${round(i.loadGeneratorUs + i.upstreamUs)}. ` +
    `Model: 2 cores ${row(two)}; 16 cores ${row(sixteen)}`
  );
}
