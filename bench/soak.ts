// The soak (issue 28; a bench row since issue 42): a sim fleet and a gateway as real processes on
// loopback, a steady mixed load (streamed and whole answers, client aborts, malformed bodies, a
// node failing now and then), and the gateway's RSS sampled over time. Flat = the average of the
// last third of the samples after warm-up within 10 % of the first third's. `npm run soak` prints
// it alone (scripts/soak.ts); `npm run bench -- --only soak [--soak-minutes N]` reads it into the
// targets table (flat and ≤ 120 MB).

import { Agent } from 'undici';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startGatewayProcess, startSimProcess } from '#test/fixtures/processes.ts';
import { bedGatewayToml, chatSpec, pause, sendOne, simNode, type OutcomeKind, type RequestSpec } from '#test/faults/harness.ts';

export const FLAT_TOLERANCE = 0.1;
/** Samples dropped at the start while code is compiled, pools fill and V8 sizes its heap. */
const WARM_UP_SHARE = 0.2;
const WARM_UP_MIN_MS = 60_000;
/** The recommended heap flags (docs/performance.md, "Memory flags"). */
export const RECOMMENDED_FLAGS = '--max-semi-space-size=16 --max-old-space-size=1024';

export interface SoakSample {
  readonly atSeconds: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly requests: number;
  readonly errors: number;
}

export interface SoakOptions {
  readonly minutes: number;
  readonly concurrency: number;
  readonly seed: number;
  /** V8 flags for the gateway ('' = V8's defaults). */
  readonly gatewayFlags: string;
  /** Each sample as it is taken (the script prints them). */
  readonly onSample?: (sample: SoakSample) => void;
}

export interface SoakVerdict {
  readonly flat: boolean;
  readonly warmUpSeconds: number;
  readonly firstThirdRssBytes: number;
  readonly lastThirdRssBytes: number;
  /** (last − first) / first. */
  readonly change: number;
  readonly heapFloorFirstBytes: number;
  readonly heapFloorLastBytes: number;
  readonly maxRssBytes: number;
}

export interface SoakResult {
  readonly minutes: number;
  readonly concurrency: number;
  readonly gatewayFlags: string;
  readonly samples: readonly SoakSample[];
  readonly outcomes: Readonly<Record<string, number>>;
  readonly requests: number;
  readonly errors: number;
  /** Undefined: too few samples after warm-up for a verdict (run longer). */
  readonly verdict: SoakVerdict | undefined;
}

function average(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** Pure: flat or growing, from the samples of a run of `durationMs`. */
export function soakVerdict(samples: readonly SoakSample[], durationMs: number): SoakVerdict | undefined {
  const warmUpSeconds = Math.max(WARM_UP_MIN_MS, durationMs * WARM_UP_SHARE) / 1000;
  const measured = samples.filter((s) => s.atSeconds > warmUpSeconds);
  if (measured.length < 3) return undefined;
  const third = Math.max(1, Math.floor(measured.length / 3));
  const first = average(measured.slice(0, third).map((s) => s.rssBytes));
  const last = average(measured.slice(-third).map((s) => s.rssBytes));
  const change = (last - first) / first;
  return {
    flat: change <= FLAT_TOLERANCE,
    warmUpSeconds,
    firstThirdRssBytes: first,
    lastThirdRssBytes: last,
    change,
    // The lowest heap reading of a third approximates the live heap after a GC: a leak raises it.
    heapFloorFirstBytes: Math.min(...measured.slice(0, third).map((s) => s.heapUsedBytes)),
    heapFloorLastBytes: Math.min(...measured.slice(-third).map((s) => s.heapUsedBytes)),
    maxRssBytes: Math.max(...measured.map((s) => s.rssBytes)),
  };
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const durationMs = options.minutes * 60_000;
  // At least ~12 samples, at most one every 10 s.
  const sampleMs = Math.max(2_000, Math.min(10_000, Math.floor(durationMs / 12)));
  const sim = await startSimProcess(
    [simNode('a', 'vllm', ['m']), simNode('b', 'vllm', ['m']), simNode('c', 'llamacpp', ['m'], { slots: 8 })].join('\n\n'),
  );
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', options.gatewayFlags].join(' ').trim();
  const gw = await startGatewayProcess(bedGatewayToml(sim.nodes, {}), nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions });
  const random = seededRandom(options.seed);
  const dispatcher = new Agent({ connections: options.concurrency, keepAliveTimeout: 5_000 });
  const counts = new Map<OutcomeKind, number>();
  const tally = { requests: 0, errors: 0 };
  const stop = new AbortController();
  const started = Date.now();

  const nextSpec = (): RequestSpec => {
    const roll = random();
    const stream = random() < 0.5;
    const spec = chatSpec('m', stream, { max_tokens: 4 + Math.floor(random() * 24) });
    if (roll < 0.02)
      return { path: '/v1/chat/completions', payload: '{"model": "m", "messages": [', stream: false, expectStatus: 400 };
    if (roll < 0.07) return { ...spec, abortAfterMs: Math.floor(random() * 120) };
    return spec;
  };
  const worker = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      const outcome = await sendOne(dispatcher, gw.url, nextSpec());
      tally.requests += 1;
      counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1);
      if (!['ok', 'expected', 'aborted', 'short_stream'].includes(outcome.kind)) tally.errors += 1;
      await pause(10);
    }
  };
  // Now and then node b fails every request for a few seconds (failover, ejection, readmission).
  const faults = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      await pause(30_000, stop.signal);
      if (stop.signal.aborted) break;
      await httpJson('POST', `${sim.url('b')}/__sim/faults`, { inference: 'error500' });
      await pause(5_000, stop.signal);
      await httpJson('POST', `${sim.url('b')}/__sim/faults`, { inference: 'none' });
    }
  };
  const samples: SoakSample[] = [];
  const sampler = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      await pause(sampleMs, stop.signal);
      const runtime = (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ rss_bytes: number; heap_used_bytes: number }>();
      const sample = {
        atSeconds: Math.round((Date.now() - started) / 1000),
        rssBytes: runtime.rss_bytes,
        heapUsedBytes: runtime.heap_used_bytes,
        requests: tally.requests,
        errors: tally.errors,
      };
      samples.push(sample);
      options.onSample?.(sample);
    }
  };
  const timer = setTimeout(() => stop.abort(), durationMs);
  try {
    await Promise.all([...Array.from({ length: options.concurrency }, worker), faults(), sampler()]);
  } finally {
    clearTimeout(timer);
    await dispatcher.destroy();
    await gw.stop();
    await sim.stop();
  }
  return {
    minutes: options.minutes,
    concurrency: options.concurrency,
    gatewayFlags: options.gatewayFlags,
    samples,
    outcomes: Object.fromEntries(counts),
    requests: tally.requests,
    errors: tally.errors,
    verdict: soakVerdict(samples, durationMs),
  };
}
