// The load generator: wrk when installed (C, one thread: the least CPU taken from the measured
// processes on a small machine), else autocannon from devDependencies. Both POST the same body
// file over keep-alive connections for a fixed time and report the same fields.

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { hasCommand } from './nginx.ts';
import { clockTicksPerSecond, cpuSeconds } from './proc-stats.ts';
import { REPO_ROOT } from './processes.ts';

export type LoadTool = 'wrk' | 'autocannon';

export interface LoadSpec {
  readonly url: string;
  readonly bodyFile: string;
  readonly connections: number;
  readonly durationS: number;
  /** Headers every request carries besides its content type (Portkey's provider and host). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface LoadResult {
  readonly requests: number;
  readonly durationS: number;
  readonly requestsPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly max: number };
  /** Socket errors, timeouts and non-2xx answers. */
  readonly errors: number;
  /** CPU seconds the load generator used (sampled every 100 ms while it ran). */
  readonly loadGeneratorCpuSeconds: number;
}

export function pickTool(requested: string | undefined): LoadTool {
  if (requested === 'autocannon') return 'autocannon';
  if (requested === 'wrk' && !hasCommand('wrk')) throw new Error('--tool wrk: wrk is not installed');
  return hasCommand('wrk') ? 'wrk' : 'autocannon';
}

export function runLoad(tool: LoadTool, spec: LoadSpec): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

interface WrkReport {
  requests: number;
  duration_us: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latency_us: { p50: number; p90: number; p99: number; max: number };
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const args = [
    '-t1',
    `-c${spec.connections}`,
    `-d${Math.max(1, Math.round(spec.durationS))}s`,
    '--timeout',
    '10s',
    '-s',
    join(REPO_ROOT, 'bench/wrk-report.lua'),
    spec.url,
  ];
  // One `name: value` a line (bench/wrk-report.lua).
  const headers = Object.entries(spec.headers ?? {})
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const { out, cpuSeconds } = await capture('wrk', args, { BENCH_BODY_FILE: spec.bodyFile, BENCH_HEADERS: headers });
  const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (line === undefined) throw new Error(`wrk printed no result:\n${out}`);
  const report = JSON.parse(line.slice('BENCH_RESULT '.length)) as WrkReport;
  const durationS = report.duration_us / 1e6;
  const e = report.errors;
  const us = report.latency_us;
  return {
    requests: report.requests,
    durationS,
    requestsPerSecond: report.requests / durationS,
    latencyMs: { p50: us.p50 / 1000, p90: us.p90 / 1000, p99: us.p99 / 1000, max: us.max / 1000 },
    errors: e.connect + e.read + e.write + e.status + e.timeout,
    loadGeneratorCpuSeconds: cpuSeconds,
  };
}

interface AutocannonReport {
  requests: { total: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p90: number; p99: number; max: number };
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const cli = join(REPO_ROOT, 'node_modules/autocannon/autocannon.js');
  const args = [
    cli,
    '-c',
    String(spec.connections),
    '-d',
    String(spec.durationS),
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    ...Object.entries(spec.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}=${value}`]),
    '-i',
    spec.bodyFile,
    '-j',
    spec.url,
  ];
  const { out, cpuSeconds } = await capture(process.execPath, args, {});
  const start = out.indexOf('{');
  if (start < 0) throw new Error(`autocannon printed no result:\n${out}`);
  const report = JSON.parse(out.slice(start)) as AutocannonReport;
  return {
    requests: report.requests.total,
    durationS: report.duration,
    requestsPerSecond: report.requests.total / report.duration,
    latencyMs: { p50: report.latency.p50, p90: report.latency.p90, p99: report.latency.p99, max: report.latency.max },
    errors: report.errors + report.timeouts + report.non2xx,
    loadGeneratorCpuSeconds: cpuSeconds,
  };
}

function capture(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ out: string; cpuSeconds: number }> {
  const ticks = clockTicksPerSecond();
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let cpu = 0;
    const poll = setInterval(() => {
      try {
        if (child.pid !== undefined) cpu = cpuSeconds(child.pid, ticks);
      } catch {
        // exited between two polls: keep the last sample
      }
    }, 100);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', (error) => {
      clearInterval(poll);
      reject(error);
    });
    child.once('exit', (code) => {
      clearInterval(poll);
      if (code === 0) resolve({ out: stdout, cpuSeconds: cpu });
      else reject(new Error(`${command} exited ${code}: ${stderr}${stdout}`));
    });
  });
}
