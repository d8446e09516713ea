// Ten thousand streams (issue 28): an open-loop client opens N concurrent SSE streams (default
// 10,000) at a fixed rate through one gateway to bench/stream-upstream.ts, which emits 20 tokens/s
// on each; then the same N straight to the upstream ("direct"). Every stream is checked complete
// and byte-exact as it arrives (streamEvent), the gaps between consecutive events are timed, and
// the gateway's RSS is read idle and while all N are open: RSS per stream = (RSS at N − idle) / N;
// added inter-chunk p99 = the gateway's gap p99 − direct's.
// Each stream is its own connection (node:http, no agent, keep-alive off), as N clients would be.
// The bench raises RLIMIT_NOFILE of its own process (prlimit, root) before it spawns the upstream
// and the gateway, which inherit it: the gateway holds 2 descriptors per stream.
// `npm run bench -- --only streams [--streams N]`; alone: `node bench/streams-10k.ts [--streams N]
// [--rate OPENS_PER_S] [--hold S] [--interval MS] [--gateway-flags="NODE FLAGS"]` prints one JSON line (--interval: ms between
// a stream's events, 50 = 20 tokens/s; a slower one measures memory per stream where the machine
// has not the CPU for N × 20 events a second).

import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { createHistogram, monitorEventLoopDelay, type RecordableHistogram } from 'node:perf_hooks';
import { cpuSeconds, memory } from './proc-stats.ts';
import { proxyGatewayConfig, sleepMs, startGateway, startNodeScript } from './processes.ts';
import { MB } from './stats.ts';
import { raiseAcceptQueues, type AcceptQueues } from './accept-queues.ts';
import { countersMoved, readTcpCounters, type TcpCounters } from './tcp-counters.ts';
import { readStamp, streamEvent, wallMicros } from './stream-upstream.ts';
import { BENCH_MODEL } from './upstream.ts';

export interface StreamsRow {
  readonly target: 'direct' | 'switchyard';
  readonly streams: number;
  readonly complete: number;
  /** Streams whose bytes differed from what the upstream sent (or that ended early / failed). */
  readonly broken: number;
  readonly maxOpen: number;
  readonly gapP50Ms: number;
  readonly gapP99Ms: number;
  readonly gapP999Ms: number;
  /** Each event's trip from the upstream's write (its `: t=` stamp) to the client: p50, p99, p99.9. */
  readonly tripP50Ms: number;
  readonly tripP99Ms: number;
  readonly tripP999Ms: number;
  /** How late the client opened streams against their due times (its own cost), p99. */
  readonly openLateP99Ms: number;
  readonly clientLoopDelayP99Ms: number;
  readonly clientCpuPercent: number;
  readonly upstreamCpuPercent: number;
  readonly gatewayCpuPercent?: number;
  readonly gatewayIdleRssMB?: number;
  readonly gatewayRssAtNMB?: number;
  readonly rssPerStreamKB?: number;
  /**
   * Why streams broke, by where the client was and the error: `connect` (no TCP connection yet),
   * `request` (connected, no response head yet: the gateway's or the kernel's reset of the
   * client's own connection), `stream` (after the head); `http` a status other than 200,
   * `bytes` a differing event, `short` an end before [DONE].
   */
  readonly errors: Readonly<Record<string, number>>;
  /** What the upstream saw end before its answer finished (the gateway's side of the relay). */
  readonly upstreamCutShort: number;
  /** The kernel's TCP counters that moved during the row (bench/tcp-counters.ts; machine-wide). */
  readonly tcp: Partial<TcpCounters>;
}

export interface StreamsResult {
  /** Asked for; `streams` is fewer when RLIMIT_NOFILE (fileLimit) could not be raised far enough. */
  readonly requested: number;
  readonly streams: number;
  readonly tokens: number;
  readonly intervalMs: number;
  readonly openRate: number;
  readonly fileLimit: number;
  /** The kernel's accept and SYN queue limits during the run (bench/accept-queues.ts), undefined off Linux. */
  readonly acceptQueues: AcceptQueues | undefined;
  /** What the gateway's `[server] listen_backlog` asked for (the kernel caps it at somaxconn). */
  readonly listenBacklog: number;
  readonly rows: readonly StreamsRow[];
  /** Gateway gap p99 − direct gap p99. */
  readonly addedGapP99Ms: number | undefined;
  /** Gateway trip p50 / p99 − direct's: what the relay adds to each event. */
  readonly addedTripP50Ms: number | undefined;
  readonly addedTripP99Ms: number | undefined;
}

interface Tally {
  open: number;
  maxOpen: number;
  complete: number;
  broken: number;
  readonly gaps: RecordableHistogram;
  readonly late: RecordableHistogram;
  /** Each event's trip, µs: from the upstream's stamp to its last byte here. */
  readonly trips: RecordableHistogram;
  readonly errors: Map<string, number>;
  firstError?: string;
}

const newTally = (): Tally => ({
  open: 0,
  maxOpen: 0,
  complete: 0,
  broken: 0,
  gaps: createHistogram(),
  late: createHistogram(),
  trips: createHistogram(),
  errors: new Map(),
});

/** One stream: POST, then each event compared with streamEvent as it completes; gaps from event 1 on. */
function oneStream(url: URL, id: string, tokens: number, tally: Tally): Promise<void> {
  const body = JSON.stringify({ model: BENCH_MODEL, stream: true, user: id, messages: [{ role: 'user', content: 'go' }] });
  return new Promise((resolve) => {
    let index = 0;
    let pending = '';
    let last = 0;
    let stampedAt: number | undefined;
    let failed = false;
    let phase: 'connect' | 'request' | 'stream' = 'connect';
    const fail = (why: string, kind: string): void => {
      if (failed) return;
      failed = true;
      tally.broken += 1;
      tally.errors.set(kind, (tally.errors.get(kind) ?? 0) + 1);
      tally.firstError ??= `${id}: ${why}`;
    };
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' },
      },
      (res) => {
        phase = 'stream';
        if (res.statusCode !== 200) fail(`HTTP ${res.statusCode}`, `http ${res.statusCode}`);
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          if (failed) return;
          pending += text;
          for (;;) {
            if (stampedAt === undefined) {
              const stamp = readStamp(pending);
              if (stamp === 'partial') return;
              if (stamp === undefined)
                return fail(`event ${index} has no stamp: ${JSON.stringify(pending.slice(0, 80))}`, 'bytes');
              stampedAt = stamp.us;
              pending = pending.slice(stamp.length);
            }
            const expected = streamEvent(id, index, tokens);
            if (pending.length < expected.length) {
              if (!expected.startsWith(pending)) fail(`event ${index} differs: ${JSON.stringify(pending.slice(0, 80))}`, 'bytes');
              return;
            }
            if (!pending.startsWith(expected))
              return fail(`event ${index} differs: ${JSON.stringify(pending.slice(0, 80))}`, 'bytes');
            pending = pending.slice(expected.length);
            const now = performance.now();
            tally.trips.record(Math.max(1, wallMicros() - stampedAt));
            stampedAt = undefined;
            if (index > 0) tally.gaps.record(Math.max(1, Math.round((now - last) * 1000)));
            last = now;
            index += 1;
          }
        });
        res.on('end', () => {
          if (!failed && index === tokens + 1 && pending === '') tally.complete += 1;
          else fail(`ended after ${index} of ${tokens + 1} events`, 'short');
        });
      },
    );
    req.on('socket', (socket) => socket.once('connect', () => (phase = 'request')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      fail(`${phase}: ${error.message}`, `${phase} ${error.code ?? error.message}`),
    );
    req.on('close', () => {
      tally.open -= 1;
      resolve();
    });
    tally.open += 1;
    tally.maxOpen = Math.max(tally.maxOpen, tally.open);
    req.end(body);
  });
}

/** N streams opened at `rate` a second, open-loop; resolves when every one has ended. */
async function openStreams(url: URL, n: number, rate: number, tokens: number, tally: Tally): Promise<void> {
  const start = performance.now() + 5;
  const done: Promise<void>[] = [];
  for (let i = 0; i < n; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleepMs(wait - 0.5);
    tally.late.record(Math.max(1, Math.round((performance.now() - due) * 1000)));
    done.push(oneStream(url, `s${i}`, tokens, tally));
  }
  await Promise.all(done);
}

/** The upstream's count of answers that ended before they finished (bench/stream-upstream.ts /open). */
async function upstreamCutShort(base: string): Promise<number> {
  const res = await fetch(`${base}/open`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as { cutShort: number }).cutShort;
}

const ms = (h: RecordableHistogram, p: number): number => h.percentile(p) / 1000;

async function measure(
  target: StreamsRow['target'],
  base: string,
  options: {
    n: number;
    rate: number;
    tokens: number;
    upstreamPid: number;
    upstreamUrl: string;
    gatewayPid?: number;
    ticks: number;
  },
): Promise<StreamsRow> {
  const url = new URL(`${base}/v1/chat/completions`);
  const gw = options.gatewayPid;
  // Warm up the path (JIT, pools) with a few short-lived streams; then read the idle RSS.
  const warm = newTally();
  await openStreams(url, 20, 200, options.tokens, warm);
  if (warm.broken > 0) throw new Error(`${target}: warm-up streams broken: ${warm.firstError}`);
  await sleepMs(1000);
  const idle = gw === undefined ? undefined : memory(gw).rssBytes;
  const tally = newTally();
  const tcp0 = readTcpCounters();
  const cut0 = await upstreamCutShort(options.upstreamUrl);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let atN = 0;
  const sampler = setInterval(() => {
    if (gw !== undefined && tally.open >= options.n) atN = Math.max(atN, memory(gw).rssBytes);
  }, 200);
  const cpu0 = {
    self: process.cpuUsage(),
    up: cpuSeconds(options.upstreamPid, options.ticks),
    gw: gw === undefined ? 0 : cpuSeconds(gw, options.ticks),
  };
  const t0 = performance.now();
  await openStreams(url, options.n, options.rate, options.tokens, tally);
  const wall = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  loop.disable();
  const self = process.cpuUsage(cpu0.self);
  const pct = (seconds: number): number => (100 * seconds) / wall;
  const row: StreamsRow = {
    target,
    streams: options.n,
    complete: tally.complete,
    broken: tally.broken,
    maxOpen: tally.maxOpen,
    gapP50Ms: ms(tally.gaps, 50),
    gapP99Ms: ms(tally.gaps, 99),
    gapP999Ms: ms(tally.gaps, 99.9),
    tripP50Ms: ms(tally.trips, 50),
    tripP99Ms: ms(tally.trips, 99),
    tripP999Ms: ms(tally.trips, 99.9),
    openLateP99Ms: ms(tally.late, 99),
    clientLoopDelayP99Ms: loop.percentile(99) / 1e6,
    clientCpuPercent: pct((self.user + self.system) / 1e6),
    upstreamCpuPercent: pct(cpuSeconds(options.upstreamPid, options.ticks) - cpu0.up),
    errors: Object.fromEntries(tally.errors),
    upstreamCutShort: (await upstreamCutShort(options.upstreamUrl)) - cut0,
    tcp: countersMoved(tcp0, readTcpCounters()),
  };
  if (tally.firstError !== undefined) process.stderr.write(`${target}: first broken stream: ${tally.firstError}\n`);
  if (gw === undefined || idle === undefined) return row;
  return {
    ...row,
    gatewayCpuPercent: pct(cpuSeconds(gw, options.ticks) - cpu0.gw),
    gatewayIdleRssMB: idle / MB,
    gatewayRssAtNMB: atN / MB,
    rssPerStreamKB: atN === 0 ? Number.NaN : (atN - idle) / 1024 / options.n,
  };
}

/** Descriptors a gateway holds besides its streams' sockets (listeners, loggers, libraries), with margin. */
const FD_RESERVE = 200;

/** Raises this process's RLIMIT_NOFILE (children inherit it); the soft limit it has after. */
export function raiseFileLimit(wanted: number): number {
  try {
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${wanted}:${wanted}`], { stdio: 'ignore' });
  } catch {
    // Not root or no prlimit: keep what we have, and say so in the result.
  }
  const out = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--raw', '--noheadings', '--output', 'SOFT'], {
    encoding: 'utf8',
  });
  return Number(out.trim());
}

export async function runStreamsBench(options: {
  streams: number;
  rate: number;
  holdS: number;
  intervalMs?: number;
  ticksPerSecond: number;
  gatewayFlags?: readonly string[];
}): Promise<StreamsResult> {
  const intervalMs = options.intervalMs ?? 50;
  const fileLimit = raiseFileLimit(Math.max(65_536, 2 * options.streams + 4096));
  // The gateway holds 2 descriptors per stream (client side, upstream side) plus its own ~100:
  // below that limit the run is scaled down to what the limit allows, and says so.
  const n = Math.min(options.streams, Math.floor((fileLimit - FD_RESERVE) / 2));
  if (n < 1) throw new Error(`RLIMIT_NOFILE is ${fileLimit}: too low for any stream`);
  // Each stream lasts the whole ramp plus the hold, so all N are open together for holdS seconds.
  const tokens = Math.ceil(((n / options.rate + options.holdS) * 1000) / intervalMs);
  // Room in the accept queues for every stream at once (the gateway's and the upstream's listeners).
  const listenBacklog = Math.min(65_535, n + 1024);
  const raised = raiseAcceptQueues(listenBacklog);
  let rows: StreamsRow[];
  try {
    rows = await measureBoth({
      n,
      tokens,
      intervalMs,
      listenBacklog,
      rate: options.rate,
      ticks: options.ticksPerSecond,
      gatewayFlags: options.gatewayFlags ?? [],
    });
  } finally {
    raised.restore();
  }
  const direct = rows.find((r) => r.target === 'direct');
  const ours = rows.find((r) => r.target === 'switchyard');
  const addedGapP99Ms = direct === undefined || ours === undefined ? undefined : ours.gapP99Ms - direct.gapP99Ms;
  const both = direct !== undefined && ours !== undefined;
  const addedTripP50Ms = both ? ours.tripP50Ms - direct.tripP50Ms : undefined;
  const addedTripP99Ms = both ? ours.tripP99Ms - direct.tripP99Ms : undefined;
  return {
    requested: options.streams,
    streams: n,
    tokens,
    intervalMs,
    openRate: options.rate,
    fileLimit,
    acceptQueues: raised.queues,
    listenBacklog,
    rows,
    addedGapP99Ms,
    addedTripP50Ms,
    addedTripP99Ms,
  };
}

/** The direct row, then the gateway's (its listener asks for `listenBacklog`). */
async function measureBoth(o: {
  n: number;
  tokens: number;
  intervalMs: number;
  listenBacklog: number;
  rate: number;
  ticks: number;
  gatewayFlags: readonly string[];
}): Promise<StreamsRow[]> {
  const upstream = await startNodeScript('bench/stream-upstream.ts', [
    '--tokens',
    String(o.tokens),
    '--interval',
    String(o.intervalMs),
  ]);
  const rows: StreamsRow[] = [];
  try {
    const upstreamUrl = String(upstream.ready.url);
    const common = { n: o.n, rate: o.rate, tokens: o.tokens, upstreamPid: upstream.pid, upstreamUrl, ticks: o.ticks };
    rows.push(await measure('direct', upstreamUrl, common));
    const config =
      proxyGatewayConfig(upstreamUrl).replace('[server]\n', `[server]\nlisten_backlog = ${o.listenBacklog}\n`) +
      `[upstream]\nmax_connections = ${o.n + 256}\n[routing]\nmax_queue = ${o.n}\n`;
    const gateway = await startGateway(config, { nodeFlags: o.gatewayFlags });
    try {
      rows.push(await measure('switchyard', gateway.url, { ...common, gatewayPid: gateway.pid }));
    } finally {
      await gateway.stop();
    }
  } finally {
    await upstream.stop();
  }
  return rows;
}

if (import.meta.main) {
  const { parseArgs } = await import('node:util');
  const { clockTicksPerSecond } = await import('./proc-stats.ts');
  const flags = {
    streams: { type: 'string', default: '10000' },
    rate: { type: 'string', default: '1000' },
    hold: { type: 'string', default: '5' },
    interval: { type: 'string', default: '50' },
    'gateway-flags': { type: 'string', default: '' },
  } as const;
  const { values } = parseArgs({ options: flags });
  const gatewayFlags = values['gateway-flags'].split(' ').filter((flag) => flag !== '');
  const options = {
    streams: Number(values.streams),
    rate: Number(values.rate),
    holdS: Number(values.hold),
    intervalMs: Number(values.interval),
    gatewayFlags,
  };
  const result = await runStreamsBench({ ...options, ticksPerSecond: clockTicksPerSecond() });
  process.stdout.write(`${JSON.stringify({ event: 'streams', ...result })}\n`);
}
