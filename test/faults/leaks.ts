// Leak checks after a case: leases, queued and retiring requests, upstream requests in the
// gateway's pools, work left on the nodes, open gateway requests, and RSS growth.

import assert from 'node:assert/strict';
import { eventually, httpJson } from '#test/fixtures/http.ts';

export interface RuntimeView {
  readonly rss_bytes: number;
  readonly active_requests: number;
  readonly leases_in_flight: number;
  readonly retiring_in_flight: number;
  readonly queue_depth: Readonly<Record<string, number>>;
  readonly upstream: Readonly<Record<string, { connected: number; running: number; pending: number }>>;
}

export interface LeakFigures {
  /** Leases, retiring requests, queued requests and per-node in-flight counts still held. */
  readonly leakedLeases: number;
  /** Upstream requests still running or waiting for a socket in the gateway's pools. */
  readonly upstreamBusy: number;
  /** Idle keep-alive sockets still open to the case's nodes (bounded by the load's concurrency). */
  readonly upstreamIdle: number;
  /** Requests the sim nodes are still working on (an upstream request the gateway never ended). */
  readonly simInFlight: number;
  /** Gateway requests still open besides the one asking. */
  readonly activeRequests: number;
  readonly rssGrowthBytes: number;
}

interface HostsView {
  readonly hosts: readonly {
    readonly name: string;
    readonly in_flight: number;
    readonly leases: Readonly<Record<string, unknown>>;
  }[];
}

/** What the drain checks read: the gateway, and the sim nodes that are running. */
export interface DrainTarget {
  readonly url: string;
  readonly nodes: readonly { readonly name: string; readonly url: string }[];
}

/**
 * Reads the gateway and the nodes until nothing is held and at most `idleBound` idle sockets are
 * left open (sockets a node answered `Connection: close` on take a moment to go, longer on a busy
 * machine), bounded by `timeoutMs`; returns the last figures.
 */
export async function drainFigures(
  target: DrainTarget,
  rssBefore: number,
  caseNodes?: readonly string[],
  timeoutMs = 10_000,
  idleBound = Number.POSITIVE_INFINITY,
): Promise<LeakFigures> {
  const idleOf = new Set(caseNodes ?? target.nodes.map((n) => n.name));
  let figures: LeakFigures | undefined;
  const read = async (): Promise<LeakFigures> => {
    const runtime = (await httpJson('GET', `${target.url}/admin/runtime`)).json<RuntimeView>();
    const hosts = (await httpJson('GET', `${target.url}/admin/hosts`)).json<HostsView>();
    const queued = Object.values(runtime.queue_depth).reduce((a, b) => a + b, 0);
    const hostHeld = hosts.hosts.reduce((n, h) => n + h.in_flight + Object.keys(h.leases).length, 0);
    const pools = Object.values(runtime.upstream);
    const casePools = Object.entries(runtime.upstream)
      .filter(([name]) => idleOf.has(name))
      .map(([, p]) => p);
    let simInFlight = 0;
    for (const node of target.nodes) {
      const stats = (await httpJson('GET', `${node.url}/__sim/stats`)).json<{ inFlight: number }>();
      simInFlight += stats.inFlight;
    }
    const busy = pools.reduce((n, p) => n + p.running + p.pending, 0);
    return {
      leakedLeases: runtime.leases_in_flight + runtime.retiring_in_flight + queued + hostHeld,
      upstreamBusy: busy,
      upstreamIdle: casePools.reduce((n, p) => n + p.connected - p.running, 0),
      simInFlight,
      // The /admin/runtime request itself is one.
      activeRequests: runtime.active_requests - 1,
      rssGrowthBytes: runtime.rss_bytes - rssBefore,
    };
  };
  try {
    await eventually(
      async () => {
        figures = await read();
        return (
          figures.leakedLeases === 0 &&
          figures.upstreamBusy === 0 &&
          figures.simInFlight === 0 &&
          figures.activeRequests === 0 &&
          figures.upstreamIdle <= idleBound
        );
      },
      timeoutMs,
      'leases, upstream requests and node work to drain',
    );
  } catch {
    // Fall through with the last figures; the assertions name what stayed held.
  }
  return figures ?? (await read());
}

function mib(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}

/**
 * A coarse guard only: within one short case RSS follows V8's heap sizing more than live memory
 * (the live heap after a GC stays near 25 MiB; `npm run soak` is the real check).
 */
export const RSS_GROWTH_BOUND_BYTES = 128 * 1024 * 1024;

export function assertNoLeaks(figures: LeakFigures, concurrency: number, rssBoundBytes = RSS_GROWTH_BOUND_BYTES): void {
  assert.equal(figures.leakedLeases, 0, `leases still held: ${JSON.stringify(figures)}`);
  assert.equal(figures.upstreamBusy, 0, `upstream requests still running: ${JSON.stringify(figures)}`);
  assert.equal(figures.simInFlight, 0, `nodes still working on requests: ${JSON.stringify(figures)}`);
  assert.equal(figures.activeRequests, 0, `gateway requests still open: ${JSON.stringify(figures)}`);
  // Keep-alive sockets stay open for reuse, but never more than the load could have needed.
  // Each of a case's two nodes may have needed one socket per concurrent request.
  assert.ok(
    figures.upstreamIdle <= 2 * concurrency,
    `idle upstream sockets ${figures.upstreamIdle} > 2 × concurrency ${concurrency}`,
  );
  assert.ok(figures.rssGrowthBytes < rssBoundBytes, `RSS grew ${mib(figures.rssGrowthBytes)} MiB`);
}
