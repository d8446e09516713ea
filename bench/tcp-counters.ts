// The kernel's TCP counters that say why connections fail on loopback (Linux: /proc/net/netstat
// and /proc/net/snmp, this network namespace; other work on the machine counts too): read before
// and after a run, the difference says whether accept queues overflowed (SYNs dropped and
// retried), SYN cookies were sent, and how many resets went out. Absent counters read 0.

import { readFileSync } from 'node:fs';

/** The counters bench/streams-10k.ts reports, by their nstat names. */
export const TCP_COUNTERS = [
  'TcpExtListenOverflows',
  'TcpExtListenDrops',
  'TcpExtSyncookiesSent',
  'TcpExtSyncookiesRecv',
  'TcpExtSyncookiesFailed',
  'TcpExtTCPReqQFullDrop',
  'TcpExtTCPAbortOnData',
  'TcpExtTCPAbortOnClose',
  'TcpOutRsts',
  'TcpEstabResets',
  'TcpAttemptFails',
] as const;

export type TcpCounters = Record<(typeof TCP_COUNTERS)[number], number>;

/** Pure: every "Prefix: names…" line followed by "Prefix: values…", as nstat names them (Prefix + name). */
export function parseCounterTables(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const names = (lines[i] ?? '').trim().split(/\s+/);
    const values = (lines[i + 1] ?? '').trim().split(/\s+/);
    const prefix = (names[0] ?? '').replace(/:$/, '');
    if (prefix === '' || values[0] !== names[0]) continue;
    for (let k = 1; k < names.length; k += 1) out.set(prefix + names[k], Number(values[k]));
  }
  return out;
}

export function readTcpCounters(): TcpCounters {
  const read = (file: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  };
  const all = parseCounterTables(`${read('/proc/net/netstat')}\n${read('/proc/net/snmp')}`);
  return Object.fromEntries(TCP_COUNTERS.map((name) => [name, all.get(name) ?? 0])) as TcpCounters;
}

/** Pure: after − before, counter by counter; only those that moved. */
export function countersMoved(before: TcpCounters, after: TcpCounters): Partial<TcpCounters> {
  const out: Partial<TcpCounters> = {};
  for (const name of TCP_COUNTERS) if (after[name] !== before[name]) out[name] = after[name] - before[name];
  return out;
}
