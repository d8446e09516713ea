// Preloaded (`--import`) into a gateway bench/tails.ts measures: the main thread's event-loop
// delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution) and its CPU, one JSON line per second
// appended to the file named by BENCH_LOOP_DELAY_FILE: {"t": epoch ms, "p50"/"p99"/"max": ms, "cpuMs",
// "gcMs"/"gcMaxMs"/"gcCount": the garbage collector's pauses that second (perf_hooks 'gc' entries),
// "gcKinds": the same by kind (minor = scavenge, major = mark-compact, incremental marking steps)}.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file !== undefined && file !== '') {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const state = {
    cpu: process.cpuUsage(),
    gcMs: 0,
    gcMaxMs: 0,
    gcCount: 0,
    gcKinds: {} as Record<string, { ms: number; max: number; n: number }>,
  };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      state.gcMs += entry.duration;
      state.gcMaxMs = Math.max(state.gcMaxMs, entry.duration);
      state.gcCount += 1;
      const kind = gcKind((entry as { detail?: { kind?: number } | null }).detail?.kind);
      const tally = (state.gcKinds[kind] ??= { ms: 0, max: 0, n: 0 });
      tally.ms += entry.duration;
      tally.max = Math.max(tally.max, entry.duration);
      tally.n += 1;
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    const cpu = process.cpuUsage(state.cpu);
    state.cpu = process.cpuUsage();
    const line = {
      t: Date.now(),
      p50: histogram.percentile(50) / 1e6,
      p99: histogram.percentile(99) / 1e6,
      max: histogram.max / 1e6,
      cpuMs: (cpu.user + cpu.system) / 1000,
      gcMs: state.gcMs,
      gcMaxMs: state.gcMaxMs,
      gcCount: state.gcCount,
      gcKinds: state.gcKinds,
    };
    state.gcKinds = {};
    state.gcMs = 0;
    state.gcMaxMs = 0;
    state.gcCount = 0;
    histogram.reset();
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, 1000).unref();
}

/** perf_hooks' GC kinds (constants.NODE_PERFORMANCE_GC_*): scavenge, mark-compact, incremental marking, weak callbacks. */
function gcKind(kind: number | undefined): string {
  if (kind === 1) return 'minor';
  if (kind === 2) return 'major';
  if (kind === 4) return 'incremental';
  if (kind === 8) return 'weakcb';
  return 'other';
}
