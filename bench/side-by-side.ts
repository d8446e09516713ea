// Issue 42's side-by-side rows, AIGatewayBench's method: a mock upstream that answers after ~22 ms
// (bench/upstream.ts --delay-ms), one persistent connection per client (wrk), a JSON chat
// completion at c = 1 / 4 / 16 / 64, and each proxy's added latency = its p50 / p99 minus direct's
// in the same cell: Switchyard, the bare stack proxy (bench/bare-proxy.ts, the runtime's limit),
// nginx and HAProxy (Debian packages), and Portkey (npm, Node.js: bench/portkey.ts). The cells are
// bench/proxy-bench.ts's: targets alternate in every cell, medians of the rounds, each proxy's CPU
// and peak RSS read from /proc. A peer that is not installed is left out and named in `missing`.

import { checkTarget } from './first-chunk.ts';
import { startHaproxy } from './haproxy.ts';
import type { LoadTool } from './load.ts';
import { hasCommand, startNginx } from './nginx.ts';
import { hasPortkey, startPortkey } from './portkey.ts';
import { proxyGatewayConfig, startGateway, startNodeScript } from './processes.ts';
import { runProxyBench, summarize, type Measurement, type Target, type TargetName } from './proxy-bench.ts';
import { addedLatency, type AddedLatency } from './report.ts';
import { round } from './stats.ts';
import { workloads, writeBodies } from './workloads.ts';

/** AIGatewayBench's mock upstream latency. */
export const SIDE_BY_SIDE_DELAY_MS = 22;
export const SIDE_BY_SIDE_CONCURRENCIES: readonly number[] = [1, 4, 16, 64];
/** The proxies of the rows, in the table's order (direct is the floor each is measured against). */
export const SIDE_BY_SIDE_TARGETS: readonly TargetName[] = ['switchyard', 'bare', 'nginx', 'haproxy', 'portkey'];
/** The Node.js peers Switchyard is to be below at every concurrency. */
export const NODE_PEERS: readonly TargetName[] = ['portkey'];

export interface SideBySideOptions {
  readonly tool: LoadTool;
  readonly durationS: number;
  readonly warmupS: number;
  readonly rounds: number;
  readonly ticksPerSecond: number;
  /** A temporary directory for the request bodies. */
  readonly dir: string;
  readonly nodeFlags: readonly string[];
  readonly concurrencies?: readonly number[];
  readonly log: (line: string) => void;
}

export interface SideBySideResult {
  readonly delayMs: number;
  readonly concurrencies: readonly number[];
  /** Medians of the rounds, direct included. */
  readonly rows: readonly Measurement[];
  readonly added: readonly AddedLatency[];
  /** Peers not measured, each with why (not installed). */
  readonly missing: readonly string[];
}

export async function runSideBySide(o: SideBySideOptions): Promise<SideBySideResult> {
  const json = workloads().filter((w) => w.name === 'json');
  const bodyFiles = await writeBodies(o.dir, json);
  const children: { stop(): Promise<void> }[] = [];
  const missing: string[] = [];
  const concurrencies = o.concurrencies ?? SIDE_BY_SIDE_CONCURRENCIES;
  try {
    const upstream = await startNodeScript('bench/upstream.ts', ['--delay-ms', String(SIDE_BY_SIDE_DELAY_MS)]);
    children.push(upstream);
    const upstreamUrl = String(upstream.ready.url);
    const gateway = await startGateway(proxyGatewayConfig(upstreamUrl), { nodeFlags: o.nodeFlags });
    children.push(gateway);
    const bare = await startNodeScript('bench/bare-proxy.ts', [upstreamUrl]);
    children.push(bare);
    const targets: Target[] = [
      { name: 'direct', url: upstreamUrl, proxy: undefined },
      { name: 'switchyard', url: gateway.url, proxy: { pids: () => [gateway.pid] } },
      { name: 'bare', url: String(bare.ready.url), proxy: { pids: () => [bare.pid] } },
    ];
    if (hasCommand('nginx')) {
      const nginx = await startNginx(upstreamUrl);
      children.push(nginx);
      targets.push({ name: 'nginx', url: nginx.url, proxy: { pids: () => nginx.pids() } });
    } else missing.push('nginx (not installed: `npm run bench -- --install-peers`)');
    if (hasCommand('haproxy')) {
      const haproxy = await startHaproxy(upstreamUrl);
      children.push(haproxy);
      targets.push({ name: 'haproxy', url: haproxy.url, proxy: { pids: () => haproxy.pids() } });
    } else missing.push('HAProxy (not installed: `npm run bench -- --install-peers`)');
    if (hasPortkey()) {
      const portkey = await startPortkey(upstreamUrl);
      children.push(portkey);
      targets.push({ name: 'portkey', url: portkey.url, proxy: { pids: () => portkey.pids() }, headers: portkey.headers });
    } else missing.push('Portkey (not installed: `npm run bench -- --install-peers` puts it in a scratch folder)');
    for (const target of targets)
      for (const w of json) await checkTarget(target.url, w.path, w.body, w.sseChunks, target.headers);
    const raw = await runProxyBench({
      tool: o.tool,
      targets,
      upstream: { pids: () => [upstream.pid] },
      workloads: json,
      bodyFiles,
      concurrencies,
      durationS: o.durationS,
      warmupS: o.warmupS,
      rounds: o.rounds,
      ticksPerSecond: o.ticksPerSecond,
      log: o.log,
    });
    const rows = summarize(raw);
    return { delayMs: SIDE_BY_SIDE_DELAY_MS, concurrencies, rows, added: addedLatency(rows), missing };
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => {});
  }
}

const fmt = (value: number | undefined): string => (value === undefined || Number.isNaN(value) ? '—' : String(round(value)));

const LABELS: Readonly<Partial<Record<TargetName, string>>> = {
  switchyard: 'Switchyard',
  bare: 'bare stack proxy',
  nginx: 'nginx',
  haproxy: 'HAProxy',
  portkey: 'Portkey (npm, Node)',
};

/** The rows as the issue's table: added p50 / p99 per concurrency, then at the highest its req/s, CPU and peak RSS. */
export function renderSideBySide(result: SideBySideResult | undefined): string {
  if (result === undefined) return '';
  const cs = result.concurrencies;
  const top = cs.at(-1) ?? 64;
  const out: string[] = [
    '',
    `## Side by side (AIGatewayBench's method): a ${result.delayMs} ms mock upstream, JSON, wrk with one persistent connection per client`,
    '',
    `Added = the proxy's latency − direct's in the same cell (p50 / p99, ms; a negative figure is noise). At c=${top}: requests per second (bounded by the upstream's ${result.delayMs} ms), the proxy's CPU µs per request and its peak RSS.`,
    '',
    `| proxy | ${cs.map((c) => `added p50 / p99, c=${c}`).join(' | ')} | req/s, c=${top} | CPU µs/req | peak RSS MB |`,
    `|---|${cs.map(() => '---:').join('|')}|---:|---:|---:|`,
  ];
  const direct = result.rows.find((r) => r.target === 'direct' && r.concurrency === top);
  for (const target of SIDE_BY_SIDE_TARGETS) {
    const cells = cs.map((c) => {
      const a = result.added.find((x) => x.target === target && x.concurrency === c);
      return a === undefined ? '—' : `${fmt(a.p50Ms)} / ${fmt(a.p99Ms)}`;
    });
    if (cells.every((cell) => cell === '—')) continue;
    const row = result.rows.find((r) => r.target === target && r.concurrency === top);
    out.push(
      `| ${LABELS[target] ?? target} | ${cells.join(' | ')} | ${fmt(row?.requestsPerSecond)} | ${fmt(row?.proxyCpuUsPerRequest)} | ${fmt(row?.proxyPeakRssMB)} |`,
    );
  }
  if (direct !== undefined)
    out.push(
      '',
      `direct at c=${top}: ${fmt(direct.requestsPerSecond)} req/s, p50 ${fmt(direct.p50Ms)} ms, p99 ${fmt(direct.p99Ms)} ms.`,
    );
  if (result.missing.length > 0) out.push('', `Not measured: ${result.missing.join('; ')}.`);
  return `${out.join('\n')}\n`;
}
