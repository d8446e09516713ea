// The kernel's limits on a listener's queues (Linux, this network namespace): `net.core.somaxconn`
// caps the accept queue any `listen(backlog)` gets, `net.ipv4.tcp_max_syn_backlog` the half-open
// (SYN) queue. bench/streams-10k.ts opens thousands of connections a second: when the gateway's
// event loop falls behind, a full accept queue drops the handshake's last ACK, and under that
// pressure the kernel expires half-open requests early; the client's next segment then meets a
// listener with no request for it and is answered with a reset (`request ECONNRESET`). An operator
// serving 10,000 clients raises both (docs/performance.md, "Streams"); the bench does the same, as
// it raises RLIMIT_NOFILE, where it is allowed to (root), puts back what it found when it is done,
// and says in its result what the run had.

import { readFileSync, writeFileSync } from 'node:fs';

const FILES = { somaxconn: '/proc/sys/net/core/somaxconn', synBacklog: '/proc/sys/net/ipv4/tcp_max_syn_backlog' } as const;

export interface AcceptQueues {
  readonly somaxconn: number;
  readonly synBacklog: number;
}

export interface RaisedQueues {
  /** What the run has (after raising, where that was allowed). */
  readonly queues: AcceptQueues | undefined;
  /** Puts back what was found; a no-op when nothing was changed. */
  restore(): void;
}

/** The two limits, or undefined where they cannot be read (not Linux). */
export function readAcceptQueues(): AcceptQueues | undefined {
  try {
    return {
      somaxconn: Number(readFileSync(FILES.somaxconn, 'latin1').trim()),
      synBacklog: Number(readFileSync(FILES.synBacklog, 'latin1').trim()),
    };
  } catch {
    return undefined;
  }
}

function tryWrite(file: string, value: number): boolean {
  try {
    writeFileSync(file, `${value}\n`);
    return true;
  } catch {
    return false;
  }
}

/** Raises each limit below `wanted` to it where allowed; what the run then has, and how to put it back. */
export function raiseAcceptQueues(wanted: number): RaisedQueues {
  const found = readAcceptQueues();
  if (found === undefined) return { queues: undefined, restore: () => {} };
  const changed: Array<[string, number]> = [];
  for (const key of ['somaxconn', 'synBacklog'] as const) {
    if (found[key] < wanted && tryWrite(FILES[key], wanted)) changed.push([FILES[key], found[key]]);
  }
  return {
    queues: readAcceptQueues(),
    restore: () => {
      for (const [file, value] of changed) tryWrite(file, value);
    },
  };
}
