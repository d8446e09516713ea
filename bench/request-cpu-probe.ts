// Preloaded (`--import`) into a gateway bench/loop-stalls.ts measures: for every HTTP request the
// process serves, when it arrived (epoch ms), its wall time until the response finished, and the CPU
// the main thread spent meanwhile (process.threadCpuUsage: the thread's own clock, so a request that
// waited for a core does not count the wait). At c=1 nothing else runs on the loop during a request,
// so its CPU is what the loop did for it: its own work, a collector pause, a periodic task that fell
// inside it. Also every garbage-collector pause (perf_hooks 'gc': start, ms, kind). Lines appended to
// BENCH_REQUEST_CPU_FILE every 250 ms: ["r", at, wallMs, cpuMs] and ["gc", at, ms, kind].
import { appendFileSync } from 'node:fs';
import { Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.BENCH_REQUEST_CPU_FILE;
if (file !== undefined && file !== '') {
  const lines: string[] = [];
  const origin = performance.timeOrigin;
  const emit = Server.prototype.emit;
  Server.prototype.emit = function (this: Server, name: string | symbol, ...args: unknown[]): boolean {
    if (name === 'request') {
      const res = args[1] as ServerResponse<IncomingMessage>;
      const wall0 = performance.now();
      const cpu0 = process.threadCpuUsage();
      res.once('finish', () => {
        const cpu = process.threadCpuUsage(cpu0);
        const wall = performance.now() - wall0;
        lines.push(`["r",${(origin + wall0).toFixed(3)},${wall.toFixed(3)},${((cpu.user + cpu.system) / 1000).toFixed(3)}]`);
      });
    }
    return (emit as (this: Server, name: string | symbol, ...rest: unknown[]) => boolean).call(this, name, ...args);
  } as Server['emit'];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } | null }).detail?.kind ?? 0;
      lines.push(`["gc",${(origin + entry.startTime).toFixed(3)},${entry.duration.toFixed(3)},${kind}]`);
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    if (lines.length === 0) return;
    appendFileSync(file, `${lines.join('\n')}\n`);
    lines.length = 0;
  }, 250).unref();
}
