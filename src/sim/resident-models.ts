// The models a loading-capable node (llama.cpp router, Ollama) holds, and their runtime status:
// `unloaded → loading → loaded ⇄ sleeping`, loads that take `loadTimeMs`, children that take
// `unloadTimeMs` to exit, LRU eviction before a load when `modelsMax` running models are reached, and
// waiters for a load to settle. A router's request that finds it full waits in the router's own queue
// (router-queue.ts; `ensure_model_ready` below, docs/protocols.md §7.z5), or on older builds is refused
// or evicts a busy model. Eviction and name resolution are decided in residency.ts.

import type { Clock, Timer } from '#src/core/clock.ts';
import { createModelEngine, type ModelEngine } from '#src/sim/model-engine.ts';
import { hasRoom, isRunning, pickEvictionVictim, pickVictim, resolveModelName, type ResidentModel } from '#src/sim/residency.ts';
import type { ResidencyStats } from '#src/sim/recorder.ts';
import { RouterQueue, routerFullBehaviour } from '#src/sim/router-queue.ts';
import type { ModelStatus, ResolvedModel, ResolvedNode } from '#src/sim/spec.ts';

/** A queued request looks again at least this often (`cv.wait_for(200ms)` in `ensure_model_ready`). */
const QUEUE_POLL_MS = 200;

/** How a request's load ended: go on (the model is up, coming up, or its load failed: the caller reads which), or refused. */
export type RequestLoad = 'go' | 'limit_reached';

/** The fake port numbers child processes get, for `status.args`. */
const FIRST_CHILD_PORT = 39_100;

export interface ResidentView {
  readonly model: ResolvedModel;
  readonly status: ModelStatus;
  /** 0 until the model first started. */
  readonly childPort: number;
  /** Epoch ms of the last use (Ollama's expires_at is computed from it). */
  readonly lastUsedAtMs: number;
  /** Unloaded because its last load failed (a router lists `failed: true, exit_code: 1`). */
  readonly failed: boolean;
}

/**
 * One change a router reports on its model event stream (llamacpp-router-events.ts): a load started
 * (`started`), its progress (0..1), or a status reached (with the child's exit code when it went down).
 */
export type ResidentChange =
  | { readonly kind: 'started'; readonly id: string }
  | { readonly kind: 'progress'; readonly id: string; readonly value: number }
  | {
      readonly kind: 'status';
      readonly id: string;
      readonly status: ModelStatus;
      readonly exitCode: number;
      readonly woke: boolean;
    };

interface Entry {
  readonly model: ResolvedModel;
  status: ModelStatus;
  lastUsedOrder: number;
  lastUsedAtMs: number;
  childPort: number;
  failed: boolean;
  engine: ModelEngine | undefined;
  loadTimer: Timer | undefined;
  waiters: (() => void)[];
}

export class ResidentModels {
  readonly #node: ResolvedNode;
  readonly #clock: Clock;
  readonly #entries: Entry[];
  /** Every engine ever started: unloading detaches one (its requests finish), close() stops all. */
  readonly #engines: ModelEngine[] = [];
  /** Proxied requests in flight per model (the router's `req_count`, which may lag an answer's end). */
  readonly #requests = new Map<string, number>();
  /** Proxied requests whose answer has not ended yet, per model (an unload then cuts one off). */
  readonly #answering = new Map<string, number>();
  /** The router's queue of requests waiting for a `models_max` slot. */
  readonly #queue = new RouterQueue();
  /** Queued requests waiting for the next status change (the router's condition variable). */
  #statusWaiters: (() => void)[] = [];
  /** Models whose child was told to exit and has not yet (still listed as running). */
  readonly #stopping = new Set<string>();
  /** Timers of children on their way out. */
  readonly #exitTimers = new Set<Timer>();
  #useCounter = 0;
  #peakRunning = 0;
  #loads = 0;
  #unloadsMidRequest = 0;
  #peakLoading = 0;
  #overlaps = 0;
  #nextChildPort = FIRST_CHILD_PORT;
  /** Told after every change its stats show (a status, a queue, a request count): the node's activity. */
  readonly #changed: () => void;
  /** Told of every status change and load step (a router's model event stream). */
  #follower: ((change: ResidentChange) => void) | undefined;

  constructor(node: ResolvedNode, clock: Clock, changed: () => void = () => {}) {
    this.#node = node;
    this.#clock = clock;
    this.#changed = changed;
    this.#entries = node.models.map((model) => ({
      model,
      status: 'unloaded',
      lastUsedOrder: 0,
      lastUsedAtMs: clock.now(),
      childPort: 0,
      failed: false,
      engine: undefined,
      loadTimer: undefined,
      waiters: [],
    }));
    for (const entry of this.#entries) {
      if (entry.model.status === 'loading') this.#startLoading(entry);
      else if (entry.model.status !== 'unloaded') this.#spawn(entry, entry.model.status);
    }
  }

  /** Who hears each status change and load step (one follower: the router's event stream). */
  follow(follower: (change: ResidentChange) => void): void {
    this.#follower = follower;
  }

  /** Adds a model (a finished download, once the router re-reads its sources); false when known. */
  add(model: ResolvedModel): boolean {
    if (this.#entry(model.id) !== undefined) return false;
    this.#entries.push({
      model,
      status: 'unloaded',
      lastUsedOrder: 0,
      lastUsedAtMs: this.#clock.now(),
      childPort: 0,
      failed: false,
      engine: undefined,
      loadTimer: undefined,
      waiters: [],
    });
    this.#changed();
    return true;
  }

  /** The child of a running model dies (SIGKILL: exit code 1): unloaded and failed, its requests cut off. */
  crash(id: string): boolean {
    const entry = this.#entry(id);
    if (entry === undefined || !isRunning(entry.status)) return false;
    entry.loadTimer?.cancel();
    entry.loadTimer = undefined;
    entry.engine?.close();
    entry.engine = undefined;
    entry.failed = true;
    this.#setStatus(entry, 'unloaded');
    return true;
  }

  /** A loaded model's child goes to sleep (its idle timeout): still running, resumes on a request. */
  sleep(id: string): boolean {
    const entry = this.#entry(id);
    if (entry?.status !== 'loaded') return false;
    this.#setStatus(entry, 'sleeping');
    return true;
  }

  views(): ResidentView[] {
    return this.#entries.map((e) => ({
      model: e.model,
      status: e.status,
      childPort: e.childPort,
      lastUsedAtMs: e.lastUsedAtMs,
      failed: e.failed,
    }));
  }

  /** The model a name or alias refers to. */
  resolve(name: string): ResolvedModel | undefined {
    const id = resolveModelName(this.#residents(), name);
    return this.#entries.find((e) => e.model.id === id)?.model;
  }

  status(id: string): ModelStatus {
    return this.#entry(id)?.status ?? 'unloaded';
  }

  /** Its child was told to exit and has not yet: still listed as running, but no longer answering. */
  stopping(id: string): boolean {
    return this.#stopping.has(id);
  }

  engine(id: string): ModelEngine | undefined {
    return this.#entry(id)?.engine;
  }

  /** Marks a use for LRU (the router does this on proxied POSTs only). */
  touch(id: string): void {
    const entry = this.#entry(id);
    if (entry === undefined) return;
    entry.lastUsedOrder = ++this.#useCounter;
    entry.lastUsedAtMs = this.#clock.now();
  }

  /** A sleeping model wakes when a request reaches it. */
  wake(id: string): void {
    const entry = this.#entry(id);
    if (entry?.status === 'sleeping') this.#setStatus(entry, 'loaded', true);
  }

  /** Starts loading (evicting the LRU running model first if full); false when already running. */
  load(id: string): boolean {
    const entry = this.#entry(id);
    if (entry === undefined || isRunning(entry.status)) return false;
    const loading = this.#loadingOtherThan(id);
    this.#peakLoading = Math.max(this.#peakLoading, loading + 1);
    if (loading > 0) this.#overlaps++;
    const victim = pickEvictionVictim(this.#residents(), this.#node.modelsMax);
    if (victim !== undefined) this.unload(victim);
    this.#startLoading(entry);
    return true;
  }

  /**
   * A request's load (`ensure_model_ready`, autoload on, the model not `loaded` nor `sleeping`). From
   * build 10313: load at once while there is room and nobody queues; else join the model's entry of
   * the router's queue, evicting an idle model on arrival when full; the front entry's waiter loads
   * it once there is room; a model's last request ending gives its slot to the queue. Build 10312
   * refuses a load with no idle model (`model limit reached`); older builds evict the LRU model even mid-request.
   */
  async loadForRequest(id: string, signal: AbortSignal): Promise<RequestLoad> {
    // A request that needs a load while another model loads: a second switch asked at once.
    if (!isRunning(this.status(id)) && this.#loadingOtherThan(id) > 0) this.#overlaps++;
    const behaviour = routerFullBehaviour(this.#node.version);
    if (behaviour === 'evict') {
      this.load(id);
      return 'go';
    }
    if (behaviour === 'refuse') return this.#loadOrRefuse(id);
    let queued = false;
    let started = false;
    if (this.status(id) === 'unloaded') {
      const room = this.#hasRoom();
      if (room && this.#queue.empty()) started = this.#startIfRoom(id);
      else {
        this.#queue.join(id);
        queued = true;
        this.#changed();
        const victim = room ? undefined : this.#idleVictim(id);
        if (victim !== undefined) {
          this.#queue.markSlotPending(id);
          this.unload(victim);
        }
      }
    }
    try {
      for (let sawLoading = false; ;) {
        const status = this.status(id);
        if (status === 'loaded' || status === 'sleeping') return 'go';
        if (status === 'loading') sawLoading = true;
        else if (started || sawLoading || !queued) return 'go';
        if (signal.aborted) return 'go';
        if (status === 'unloaded' && this.#queue.tryClaim(id, this.#hasRoom())) {
          const ok = this.#startIfRoom(id);
          this.#queue.claimDone(id, ok);
          if (ok) {
            queued = false;
            started = true;
          }
          continue;
        }
        await this.#nextStatusChange(signal);
      }
    } finally {
      if (queued) {
        this.#queue.leave(id);
        this.#changed();
      }
    }
  }

  /** Build 10312: a load that finds no idle model to unload is refused. */
  async #loadOrRefuse(id: string): Promise<RequestLoad> {
    if (this.status(id) !== 'unloaded') return 'go';
    if (!this.#hasRoom()) {
      const victim = this.#idleVictim(id);
      if (victim === undefined) return 'limit_reached';
      this.unload(victim);
      await this.#exited(victim);
    }
    if (this.status(id) !== 'unloaded') return 'go';
    return this.#startIfRoom(id) ? 'go' : 'limit_reached';
  }

  stats(): ResidencyStats {
    const running = this.#entries.filter((e) => isRunning(e.status)).length;
    return {
      running,
      peakRunning: this.#peakRunning,
      loads: this.#loads,
      queued: this.#queue.models(),
      unloadsMidRequest: this.#unloadsMidRequest,
      peakLoading: this.#peakLoading,
      overlaps: this.#overlaps,
    };
  }

  /** An unload asked through the API (POST /models/unload): an overlap when another model is loading. */
  unloadAsked(id: string): boolean {
    if (this.#loadingOtherThan(id) > 0) this.#overlaps++;
    return this.unload(id);
  }

  #loadingOtherThan(id: string): number {
    return this.#entries.filter((e) => e.model.id !== id && e.status === 'loading').length;
  }

  requestsInFlight(id: string): number {
    return this.#requests.get(id) ?? 0;
  }

  /**
   * A proxied request reached the model's child; `end()` once it finished (no queue is woken). The
   * router's own count drops `requestEndLagMs` later (0: at once).
   */
  beginRequest(id: string): () => void {
    bump(this.#requests, id, 1);
    bump(this.#answering, id, 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      bump(this.#answering, id, -1);
      const lag = this.#node.requestEndLagMs;
      const drop = (): void => {
        bump(this.#requests, id, -1);
        this.#changed();
        if (this.requestsInFlight(id) === 0) this.#onIdle(id);
      };
      if (lag <= 0) drop();
      else this.#clock.setTimeout(drop, lag);
    };
  }

  /**
   * Stops a running model; false when it was not running. A loading child is killed at once; a
   * loaded one exits after `unloadTimeMs`, listed as it was until then (the router's `unload`).
   */
  unload(id: string): boolean {
    const entry = this.#entry(id);
    if (entry === undefined || !isRunning(entry.status)) return false;
    if (this.#stopping.has(id)) return true;
    if ((this.#answering.get(id) ?? 0) > 0) this.#unloadsMidRequest++;
    const exit = (): void => {
      this.#stopping.delete(id);
      entry.loadTimer?.cancel();
      entry.loadTimer = undefined;
      entry.engine = undefined;
      this.#setStatus(entry, 'unloaded');
    };
    const delayMs = this.#node.unloadTimeMs;
    if (delayMs <= 0 || entry.status === 'loading') {
      exit();
      return true;
    }
    this.#stopping.add(id);
    const timer = this.#clock.setTimeout(() => {
      this.#exitTimers.delete(timer);
      exit();
    }, delayMs);
    this.#exitTimers.add(timer);
    return true;
  }

  /** Resolves with the status once the model is no longer `loading` (or the signal aborts). */
  settled(id: string, signal: AbortSignal): Promise<ModelStatus> {
    const entry = this.#entry(id);
    if (entry === undefined || entry.status !== 'loading') return Promise.resolve(this.status(id));
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done);
        resolve(entry.status);
      };
      entry.waiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    for (const timer of this.#exitTimers) timer.cancel();
    this.#exitTimers.clear();
    this.#wakeStatusWaiters();
    for (const entry of this.#entries) {
      entry.loadTimer?.cancel();
      entry.loadTimer = undefined;
    }
    for (const engine of this.#engines) engine.close();
  }

  #residents(): ResidentModel[] {
    return this.#entries.map((e) => ({
      id: e.model.id,
      aliases: e.model.aliases,
      status: e.status,
      lastUsedOrder: e.lastUsedOrder,
    }));
  }

  #hasRoom(): boolean {
    return hasRoom(this.#residents(), this.#node.modelsMax);
  }

  /** `pick_victim` on a request's arrival: the idle LRU model other than `id` (one still exiting counts: the router's does too). */
  #idleVictim(id: string): string | undefined {
    return pickVictim(this.#residents(), id, (m) => this.requestsInFlight(m));
  }

  /** `load()` under the lock: starts the child while the running count allows (false: "model limit reached"). */
  #startIfRoom(id: string): boolean {
    const entry = this.#entry(id);
    if (entry === undefined || isRunning(entry.status) || !this.#hasRoom()) return false;
    this.#peakLoading = Math.max(this.#peakLoading, this.#loadingOtherThan(id) + 1);
    this.#startLoading(entry);
    return true;
  }

  /** `on_model_idle`: the model's last request ended; it gives its slot up if the queue needs one. */
  #onIdle(id: string): void {
    const status = this.status(id);
    const running = this.#entries.filter((e) => isRunning(e.status)).length;
    const idleAndReady = (status === 'loaded' || status === 'sleeping') && this.requestsInFlight(id) === 0;
    if (this.#queue.givesUpSlot(id, running, this.#node.modelsMax, idleAndReady)) this.unload(id);
  }

  /** Resolves at the next status change, after QUEUE_POLL_MS at the latest, or when the signal aborts. */
  #nextStatusChange(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.#clock.setTimeout(done, QUEUE_POLL_MS);
      this.#statusWaiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once `id` is no longer running (its child exited). */
  async #exited(id: string): Promise<void> {
    const never = new AbortController().signal;
    while (isRunning(this.status(id))) await this.#nextStatusChange(never);
  }

  #wakeStatusWaiters(): void {
    const waiters = this.#statusWaiters;
    this.#statusWaiters = [];
    for (const wake of waiters) wake();
  }

  #entry(id: string): Entry | undefined {
    return this.#entries.find((e) => e.model.id === id);
  }

  #startLoading(entry: Entry): void {
    this.#loads++;
    entry.childPort = this.#nextChildPort++;
    this.touch(entry.model.id);
    entry.failed = false;
    this.#follower?.({ kind: 'started', id: entry.model.id });
    this.#setStatus(entry, 'loading');
    this.#follower?.({ kind: 'progress', id: entry.model.id, value: 0 });
    entry.loadTimer = this.#clock.setTimeout(() => {
      entry.loadTimer = undefined;
      if (!entry.model.failsToLoad) this.#follower?.({ kind: 'progress', id: entry.model.id, value: 1 });
      if (entry.model.failsToLoad) {
        entry.failed = true;
        this.#setStatus(entry, 'unloaded');
        return;
      }
      this.#spawn(entry, 'loaded');
    }, this.#node.loadTimeMs);
  }

  #spawn(entry: Entry, status: ModelStatus): void {
    if (entry.childPort === 0) entry.childPort = this.#nextChildPort++;
    if (entry.lastUsedOrder === 0) this.touch(entry.model.id);
    const engine = createModelEngine(this.#node, entry.model, this.#clock);
    this.#engines.push(engine);
    entry.engine = engine;
    this.#setStatus(entry, status);
  }

  #setStatus(entry: Entry, status: ModelStatus, woke = false): void {
    entry.status = status;
    // A child that went down with a failure exits 1 (the router's EXIT_FAILURE for a signal too).
    this.#follower?.({ kind: 'status', id: entry.model.id, status, exitCode: entry.failed ? 1 : 0, woke });
    this.#peakRunning = Math.max(this.#peakRunning, this.#entries.filter((e) => isRunning(e.status)).length);
    this.#wakeStatusWaiters();
    this.#changed();
    if (status === 'loading') return;
    const waiters = entry.waiters;
    entry.waiters = [];
    for (const wake of waiters) wake();
  }
}

function bump(counts: Map<string, number>, id: string, by: number): void {
  const next = (counts.get(id) ?? 0) + by;
  if (next <= 0) counts.delete(id);
  else counts.set(id, next);
}
