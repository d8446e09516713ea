// Measuring a process from outside through /proc (Linux): CPU time from /proc/<pid>/stat and
// resident memory from /proc/<pid>/status. Nothing here asks the measured process anything.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second for utime/stime (getconf CLK_TCK; 100 on every common Linux). */
export function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/** utime + stime of one process, in seconds. */
export function cpuSeconds(pid: number, ticksPerSecond: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / ticksPerSecond;
}

export interface MemoryStats {
  /** Resident set size now, bytes. */
  readonly rssBytes: number;
  /** Peak resident set size (VmHWM) since start or the last resetPeak(), bytes. */
  readonly peakRssBytes: number;
}

export function memory(pid: number): MemoryStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rssBytes: kilobytesField(status, 'VmRSS') * 1024, peakRssBytes: kilobytesField(status, 'VmHWM') * 1024 };
}

/** Resets VmHWM to the current RSS (writing 5 to clear_refs, Linux ≥ 4.0); false if not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

function kilobytesField(status: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/** CPU seconds and memory of a group of processes (nginx master + worker), summed. */
export interface ProcessGroup {
  readonly pids: () => readonly number[];
}

export interface Sample {
  readonly cpuSeconds: number;
  readonly atMs: number;
}

export function sample(group: ProcessGroup, ticksPerSecond: number): Sample {
  let total = 0;
  for (const pid of group.pids()) total += cpuSeconds(pid, ticksPerSecond);
  return { cpuSeconds: total, atMs: performance.now() };
}

export function groupMemory(group: ProcessGroup): MemoryStats {
  let rss = 0;
  let peak = 0;
  for (const pid of group.pids()) {
    const m = memory(pid);
    rss += m.rssBytes;
    peak += m.peakRssBytes;
  }
  return { rssBytes: rss, peakRssBytes: peak };
}

export function resetGroupPeak(group: ProcessGroup): boolean {
  return group.pids().every((pid) => resetPeak(pid));
}

/** Child pids of `pid` (from /proc/<pid>/task/<pid>/children; empty if unreadable). */
export function childPids(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(/\s+/).map(Number);
  } catch {
    return [];
  }
}

/** Machine-wide busy CPU seconds (all cores) from /proc/stat: everything but idle and iowait. */
export function machineBusySeconds(ticksPerSecond: number): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, ...fields] = line.trim().split(/\s+/);
  const n = fields.map(Number);
  const busy = (n[0] ?? 0) + (n[1] ?? 0) + (n[2] ?? 0) + (n[5] ?? 0) + (n[6] ?? 0) + (n[7] ?? 0);
  return busy / ticksPerSecond;
}

/**
 * Waits until the machine is quiet (under `quietPercent` of one core busy for two one-second
 * samples in a row) or `maxWaitS` passed; returns the last sample, % of one core. Other work on
 * a shared machine is the main source of noise here.
 */
export async function waitForQuiet(ticksPerSecond: number, quietPercent: number, maxWaitS: number): Promise<number> {
  const deadline = performance.now() + maxWaitS * 1000;
  let quietInARow = 0;
  let last = 0;
  for (;;) {
    const before = machineBusySeconds(ticksPerSecond);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    last = (machineBusySeconds(ticksPerSecond) - before) * 100;
    quietInARow = last < quietPercent ? quietInARow + 1 : 0;
    if (quietInARow >= 2 || performance.now() > deadline) return last;
  }
}

/**
 * utime + stime per thread name of one process, in seconds (threads of one name summed: V8's
 * "V8Worker" pool). The process's own thread (tid = pid) is "main", whatever its name.
 */
export function threadCpuSeconds(pid: number, ticksPerSecond: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / ticksPerSecond);
  }
  return out;
}
