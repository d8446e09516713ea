// `npm run soak -- --minutes 10`: a sim fleet and a gateway as real processes on loopback, a steady
// mixed load (streamed and whole answers, client aborts, malformed bodies, a node failing now and
// then), and the gateway's RSS sampled over time. Prints a table and a verdict: the RSS is flat when
// the average of the last third of the samples is within 10% of the first third's (after warm-up).
// Exit code 0 when flat, 1 when it grew, 2 for bad arguments. The gateway runs with the V8 heap
// flags docs/performance.md recommends ("Memory flags", as examples/switchyard.service passes them);
// `--gateway-flags ''` runs it with V8's defaults instead.

import { parseArgs } from 'node:util';
import { Agent } from 'undici';
import { seededRandom } from '#src/sim/seeded-random.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { startGatewayProcess, startSimProcess } from '#test/fixtures/processes.ts';
import { bedGatewayToml, chatSpec, pause, sendOne, simNode, type OutcomeKind, type RequestSpec } from '#test/faults/harness.ts';

const FLAT_TOLERANCE = 0.1;
/** Samples dropped at the start while code is compiled, pools fill and V8 sizes its heap. */
const WARM_UP_SHARE = 0.2;
const WARM_UP_MIN_MS = 60_000;
/** The recommended heap flags (docs/performance.md, "Memory flags"). */
const RECOMMENDED_FLAGS = '--max-semi-space-size=16 --max-old-space-size=1024';

interface Sample {
  readonly atSeconds: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly requests: number;
  readonly errors: number;
}

function usage(message: string): never {
  process.stderr.write(
    `${message}\nusage: npm run soak -- [--minutes N] [--concurrency N] [--seed N] [--gateway-flags 'V8 FLAGS']\n`,
  );
  process.exit(2);
}

function positiveNumber(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) usage(`--${name} must be a positive number, not "${text}"`);
  return value;
}

function mib(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}

function average(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      concurrency: { type: 'string' },
      seed: { type: 'string' },
      'gateway-flags': { type: 'string', default: RECOMMENDED_FLAGS },
    },
    allowPositionals: false,
  });
  const minutes = positiveNumber(values.minutes, 10, 'minutes');
  const concurrency = Math.floor(positiveNumber(values.concurrency, 8, 'concurrency'));
  const seed = Math.floor(positiveNumber(values.seed, 1, 'seed'));
  const durationMs = minutes * 60_000;
  // At least ~12 samples, at most one every 10 s.
  const sampleMs = Math.max(2_000, Math.min(10_000, Math.floor(durationMs / 12)));

  const flags = values['gateway-flags'].trim();
  process.stderr.write(
    `soak: ${minutes} min, concurrency ${concurrency}, RSS every ${sampleMs / 1000} s, gateway flags: ${flags === '' ? "V8's defaults" : flags}\n`,
  );
  const sim = await startSimProcess(
    [simNode('a', 'vllm', ['m']), simNode('b', 'vllm', ['m']), simNode('c', 'llamacpp', ['m'], { slots: 8 })].join('\n\n'),
  );
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', flags].join(' ').trim();
  const gw = await startGatewayProcess(bedGatewayToml(sim.nodes, {}), nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions });
  const random = seededRandom(seed);
  const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 5_000 });
  const counts = new Map<OutcomeKind, number>();
  let requests = 0;
  let errors = 0;
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
      requests += 1;
      counts.set(outcome.kind, (counts.get(outcome.kind) ?? 0) + 1);
      if (!['ok', 'expected', 'aborted', 'short_stream'].includes(outcome.kind)) errors += 1;
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
  const samples: Sample[] = [];
  const sampler = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      await pause(sampleMs, stop.signal);
      const runtime = (await httpJson('GET', `${gw.url}/admin/runtime`)).json<{ rss_bytes: number; heap_used_bytes: number }>();
      const sample = {
        atSeconds: Math.round((Date.now() - started) / 1000),
        rssBytes: runtime.rss_bytes,
        heapUsedBytes: runtime.heap_used_bytes,
        requests,
        errors,
      };
      samples.push(sample);
      process.stderr.write(
        `  ${sample.atSeconds}s rss ${mib(sample.rssBytes)} MiB heap ${mib(sample.heapUsedBytes)} MiB requests ${requests} errors ${errors}\n`,
      );
    }
  };
  const timer = setTimeout(() => stop.abort(), durationMs);
  try {
    await Promise.all([...Array.from({ length: concurrency }, worker), faults(), sampler()]);
  } finally {
    clearTimeout(timer);
    await dispatcher.destroy();
    await gw.stop();
    await sim.stop();
  }

  const lines = ['| t (s) | RSS MiB | heap MiB | requests | client errors |', '|---|---|---|---|---|'];
  for (const s of samples)
    lines.push(`| ${s.atSeconds} | ${mib(s.rssBytes)} | ${mib(s.heapUsedBytes)} | ${s.requests} | ${s.errors} |`);
  console.log(lines.join('\n'));
  console.log(`\noutcomes: ${JSON.stringify(Object.fromEntries(counts))}`);
  const warmUpEnds = Math.max(WARM_UP_MIN_MS, durationMs * WARM_UP_SHARE) / 1000;
  const measured = samples.filter((s) => s.atSeconds > warmUpEnds);
  if (measured.length < 3) {
    console.log('verdict: too few samples for a verdict (run longer)');
    return 1;
  }
  const third = Math.max(1, Math.floor(measured.length / 3));
  const first = average(measured.slice(0, third).map((s) => s.rssBytes));
  const last = average(measured.slice(-third).map((s) => s.rssBytes));
  const change = (last - first) / first;
  const flat = change <= FLAT_TOLERANCE;
  // The lowest heap reading of a third approximates the live heap after a GC: a leak raises it.
  const floorFirst = Math.min(...measured.slice(0, third).map((s) => s.heapUsedBytes));
  const floorLast = Math.min(...measured.slice(-third).map((s) => s.heapUsedBytes));
  console.log(
    `verdict: ${flat ? 'FLAT' : 'GROWING'} — RSS first third ${mib(first)} MiB, last third ${mib(last)} MiB ` +
      `(${(change * 100).toFixed(1)}%, tolerance ${FLAT_TOLERANCE * 100}%), after ${warmUpEnds} s warm-up; ` +
      `heap floor ${mib(floorFirst)} → ${mib(floorLast)} MiB; highest RSS sampled ${mib(Math.max(...measured.map((s) => s.rssBytes)))} MiB; ` +
      `${requests} requests, ${errors} client errors`,
  );
  return flat ? 0 : 1;
}

process.exitCode = await main();
