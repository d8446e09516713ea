// One connection pool per node, with keep-alive and a bounded wait for a connection. A node removed
// or moved by a reload gets its pool closed gracefully: `close()` lets requests already running finish.
//
// The bounded wait (the connection gate): undici's Pool queues a request that finds every
// connection taken for as long as that lasts, unseen. Here such a request waits in a FIFO of our
// own (counted in the stats) and fails after `waitMs` as a connect timeout, which the caller treats
// like any connection failure: fail over, or use its fallback (the node's tokenizer). Admission
// keeps requests out of a full pool in the first place; this is the defence in depth for whatever
// reaches the pool anyway.
//
// The gate is a dispatcher interceptor, undici's own extension point: composed onto a Pool of
// `limit` connections (`pool.compose(gate.interceptor)`), it sees every request before the pool does.

import type { Buffer } from 'node:buffer';
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { Pool, errors } from '#src/core/undici-parts.ts';
import type { Clock, Timer } from '#src/core/clock.ts';
import type { NodeChange, NodeSpec } from '#src/config/index.ts';
import { samePoolSettings, type PoolSettings } from './pool-settings.ts';

/** Per node: the limit, open sockets, requests running and waiting for a connection, and whether all are taken. */
export interface PoolFigures {
  readonly limit: number;
  readonly connected: number;
  readonly running: number;
  readonly pending: number;
  readonly saturated: boolean;
}

export interface UpstreamPoolsOptions {
  readonly clock: Clock;
  /** A request to `node` waited `connection_wait` for a connection and gave up (to be logged). */
  readonly onConnectionWaitTimeout?: (node: string, figures: PoolFigures) => void;
}

export class UpstreamPools {
  readonly #pools = new Map<string, { url: string; gated: GatedPool }>();
  readonly #options: UpstreamPoolsOptions;
  #limits: PoolSettings;

  constructor(limits: PoolSettings, options: UpstreamPoolsOptions) {
    this.#limits = limits;
    this.#options = options;
  }

  /** The node's pool, behind its connection gate. */
  get(node: Pick<NodeSpec, 'name' | 'url'>): Dispatcher {
    return this.dispatchTo(node).dispatcher;
  }

  /** The node's pool, behind its connection gate, and its origin (named in each call's dispatch options: forward.ts). */
  dispatchTo(node: Pick<NodeSpec, 'name' | 'url'>): Pick<GatedPool, 'dispatcher' | 'origin'> {
    const existing = this.#pools.get(node.name);
    if (existing !== undefined && existing.url === node.url) return existing.gated;
    if (existing !== undefined) closeGracefully(existing.gated);
    const gated: GatedPool = gatedPool(
      new URL(node.url).origin,
      {
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connect: { timeout: this.#limits.connectTimeoutMs },
        headersTimeout: this.#limits.headersTimeoutMs,
        bodyTimeout: this.#limits.bodyIdleTimeoutMs,
      },
      {
        limit: this.#limits.maxConnections,
        waitMs: this.#limits.connectionWaitMs,
        clock: this.#options.clock,
        onWaitTimeout: () => this.#options.onConnectionWaitTimeout?.(node.name, figuresOf(gated)),
      },
    );
    this.#pools.set(node.name, { url: node.url, gated });
    return gated;
  }

  /**
   * Applies a reload: the pools of removed and replaced (moved) nodes close; a change of the pool
   * settings themselves closes every pool (new ones are built on the next request).
   */
  applyChange(change: NodeChange, limits: PoolSettings): void {
    const rebuildAll = !samePoolSettings(limits, this.#limits);
    this.#limits = limits;
    const gone = new Set([...change.nodesRemoved.map((n) => n.name), ...change.nodesReplaced.map((p) => p.next.name)]);
    for (const [name, entry] of this.#pools) {
      if (rebuildAll || gone.has(name)) {
        this.#pools.delete(name);
        closeGracefully(entry.gated);
      }
    }
  }

  /** Connection figures per node that has a pool. */
  stats(): Record<string, PoolFigures> {
    const out: Record<string, PoolFigures> = {};
    for (const [name, { gated }] of this.#pools) out[name] = figuresOf(gated);
    return out;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(
      pools.map(({ gated }) => {
        gated.gate.abandonWaiting(new Error('the gateway is shutting down'));
        return gated.pool.destroy().catch(() => {});
      }),
    );
  }
}

function figuresOf({ pool, gate: connectionGate }: GatedPool): PoolFigures {
  const { connected, running, pending } = pool.stats;
  const gate = connectionGate.stats();
  return {
    limit: gate.limit,
    connected,
    running,
    // undici's own queue stays empty while the gate holds requests back; both count as waiting.
    pending: pending + gate.waiting,
    saturated: gate.running >= gate.limit,
  };
}

/** Requests still waiting for a connection fail over now; running ones may finish. */
function closeGracefully({ pool, gate }: GatedPool): void {
  gate.abandonWaiting(new Error('the node was reconfigured'));
  void pool.close().catch(() => {});
}

// ---- the connection gate -----------------------------------------------------------------------

export interface GateSettings {
  /** Connections to the node (the pool's size) and requests running at once. */
  readonly limit: number;
  /** Longest a request waits for a connection. */
  readonly waitMs: number;
  readonly clock: Clock;
  /** A request gave up waiting; the caller logs it. */
  readonly onWaitTimeout: () => void;
}

/** A node's pool and the gate in front of it: requests go to `dispatcher`, figures come from both. */
export interface GatedPool {
  /** The pool with the gate composed onto it: where requests are sent. */
  readonly dispatcher: Dispatcher;
  /** The pool itself: its stats, close and destroy. */
  readonly pool: Pool;
  readonly gate: ConnectionGate;
  /**
   * The pool's origin, for the dispatch options of each call: undici's `compose` copies options that
   * name none into a new object with it, per request.
   */
  readonly origin: string;
}

/** Builds a pool of `settings.limit` connections to `origin` behind a connection gate. */
export function gatedPool(origin: string, options: Pool.Options, settings: GateSettings): GatedPool {
  const pool = new Pool(origin, { ...options, connections: settings.limit });
  const gate = new ConnectionGate(settings);
  return { dispatcher: pool.compose(gate.interceptor), pool, gate, origin };
}

/** The header record undici hands a handler. */
type IncomingHttpHeaders = Record<string, string | string[] | undefined>;

type Dispatch = Dispatcher['dispatch'];

interface Waiter {
  readonly opts: Dispatcher.DispatchOptions;
  readonly handler: Dispatcher.DispatchHandler;
  timer: Timer | undefined;
  detach: () => void;
}

/** The controller handed to a handler whose request never reached a connection. */
function abortedController(reason: Error): Dispatcher.DispatchController {
  return { aborted: true, paused: false, reason, abort: () => {}, pause: () => {}, resume: () => {} };
}

/** The caller's abort signal travels in the dispatch options of undici's request API. */
function signalOf(opts: Dispatcher.DispatchOptions): AbortSignal | undefined {
  const signal: unknown = (opts as { signal?: unknown }).signal;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** Where a gate not yet composed onto a pool would send a request: nowhere. */
function notComposed(): boolean {
  throw new Error('the connection gate is not composed onto a pool');
}

/** Counts the requests given a connection and holds the rest in arrival order, each for at most `waitMs`. */
export class ConnectionGate {
  readonly #settings: GateSettings;
  #running = 0;
  readonly #waiting: Waiter[] = [];
  /** The pool's own dispatch, handed over when the gate is composed onto it. */
  #next: Dispatch = notComposed;

  constructor(settings: GateSettings) {
    this.#settings = settings;
  }

  /** The interceptor to compose onto one pool (`pool.compose(gate.interceptor)`). */
  readonly interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => {
    if (this.#next !== notComposed) throw new Error('a connection gate fronts one pool only');
    this.#next = dispatch;
    return (opts, handler) => this.#dispatch(opts, handler);
  };

  /** Requests given a connection (or being connected) and requests waiting for one. */
  stats(): { readonly limit: number; readonly running: number; readonly waiting: number } {
    return { limit: this.#settings.limit, running: this.#running, waiting: this.#waiting.length };
  }

  /** Fails every waiting request at once (the pool is being closed or destroyed). */
  abandonWaiting(reason: Error): void {
    for (const waiter of this.#waiting.splice(0)) {
      waiter.timer?.cancel();
      waiter.detach();
      waiter.handler.onResponseError?.(abortedController(reason), reason);
    }
  }

  #dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#running < this.#settings.limit && this.#waiting.length === 0) this.#start(opts, handler);
    else this.#wait(opts, handler);
    // Accepted either way: the waiting list is ours, so no 'drain' is owed to the caller.
    return true;
  }

  #start(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    this.#running += 1;
    this.#next(opts, new GateReleasingHandler(handler, this.#release));
  }

  /** One per gate, not per request: a request's connection is free again. */
  readonly #release = (): void => {
    this.#running -= 1;
    this.#admitWaiting();
  };

  #admitWaiting(): void {
    while (this.#running < this.#settings.limit) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      next.timer?.cancel();
      next.detach();
      this.#start(next.opts, next.handler);
    }
  }

  #wait(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const signal = signalOf(opts);
    if (signal?.aborted === true) {
      const reason = signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError();
      handler.onResponseError?.(abortedController(reason), reason);
      return;
    }
    const waiter: Waiter = { opts, handler, timer: undefined, detach: () => {} };
    const fail = (reason: Error): void => {
      const index = this.#waiting.indexOf(waiter);
      if (index < 0) return;
      this.#waiting.splice(index, 1);
      waiter.timer?.cancel();
      waiter.detach();
      handler.onResponseError?.(abortedController(reason), reason);
    };
    if (signal !== undefined) {
      const onAbort = (): void => fail(signal.reason instanceof Error ? signal.reason : new errors.RequestAbortedError());
      signal.addEventListener('abort', onAbort, { once: true });
      waiter.detach = () => signal.removeEventListener('abort', onAbort);
    }
    const { limit, waitMs } = this.#settings;
    waiter.timer = this.#settings.clock.setTimeout(() => {
      this.#settings.onWaitTimeout();
      fail(
        new errors.ConnectTimeoutError(`no free connection within ${waitMs}ms: all ${limit} in use (upstream.max_connections)`),
      );
    }, waitMs);
    this.#waiting.push(waiter);
  }
}

/**
 * The caller's handler, told through; the gate's count is released once, when the request is over.
 * One object per request, its methods shared, instead of a closure per callback.
 */
class GateReleasingHandler implements Dispatcher.DispatchHandler {
  readonly #inner: Dispatcher.DispatchHandler;
  readonly #release: () => void;
  #released = false;

  constructor(inner: Dispatcher.DispatchHandler, release: () => void) {
    this.#inner = inner;
    this.#release = release;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    socket: Duplex,
  ): void {
    this.#releaseOnce();
    this.#inner.onRequestUpgrade?.(controller, status, headers, socket);
  }

  onResponseStarted(): void {
    this.#inner.onResponseStarted?.();
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    message?: string,
  ): void {
    this.#inner.onResponseStart?.(controller, status, headers, message);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#releaseOnce();
    this.#inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#releaseOnce();
    this.#inner.onResponseError?.(controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.#inner.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.#inner.onRequestSent?.();
  }

  #releaseOnce(): void {
    if (this.#released) return;
    this.#released = true;
    this.#release();
  }
}
