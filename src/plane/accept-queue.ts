// Whether the listener gets the accept queue `[server] listen_backlog` asks for. Linux caps every
// `listen(backlog)` at `net.core.somaxconn` without a word; when the event loop falls behind a
// burst of new connections, a queue shorter than asked overflows, and under that pressure the
// kernel answers some clients with a reset (docs/performance.md, "Streams"). Worth a warning at
// start, with the setting to raise.

import { readFileSync } from 'node:fs';

const SOMAXCONN = '/proc/sys/net/core/somaxconn';

/** Pure: the warning's fields when the kernel's cap is below what the listener asks, else undefined. */
export function acceptQueueCapped(
  listenBacklog: number,
  somaxconn: number | undefined,
): { listen_backlog: number; somaxconn: number } | undefined {
  return somaxconn !== undefined && Number.isInteger(somaxconn) && somaxconn > 0 && somaxconn < listenBacklog
    ? { listen_backlog: listenBacklog, somaxconn }
    : undefined;
}

export const ACCEPT_QUEUE_CAPPED =
  'the accept queue is shorter than [server] listen_backlog asks: the kernel caps it at net.core.somaxconn (raise it with sysctl to serve bursts of new connections)';

/** The kernel's cap, or undefined where there is none to read (not Linux). A proc file of a few bytes. */
export function readSomaxconn(file: string = SOMAXCONN): number | undefined {
  try {
    const value = Number(readFileSync(file, 'latin1').trim());
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
