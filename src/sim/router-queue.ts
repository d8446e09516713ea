// The queue a llama-server router (from build 10313, `server_lru_sched` in tools/server/server-models.cpp)
// keeps of requests waiting for a `--models-max` slot: one entry per model, its waiters merged; only
// the front entry may load, and only with room; an entry is marked when a model is being unloaded
// for it (`slot_pending`) so no other request gives one up too; an entry whose load started is
// dropped (its waiters then follow the model's status). Plain bookkeeping, as the source keeps it;
// resident-models.ts runs `ensure_model_ready` over it. docs/protocols.md §7.z5.

interface Entry {
  readonly model: string;
  /** Requests waiting for this model (`n_waiters`). */
  waiters: number;
  /** A model is already being unloaded for this entry. */
  slotPending: boolean;
  /** One of its waiters is loading it right now. */
  loading: boolean;
}

/** The router's build numbers for what its queue does (the build number is the commit count: `build_info` `b<N>-…`). */
export const ROUTER_BUSY_KEPT_BUILD = 10_312;
export const ROUTER_QUEUE_BUILD = 10_313;

/** What a router of this `build_info` does when a load finds it full: 'queue' (10313+), 'refuse' (10312), 'evict' (older). */
export function routerFullBehaviour(buildInfo: string | undefined): 'queue' | 'refuse' | 'evict' {
  const match = buildInfo === undefined ? null : /^b(\d{1,9})(?:\D|$)/.exec(buildInfo);
  if (match === null) return 'queue';
  const build = Number(match[1]);
  if (build >= ROUTER_QUEUE_BUILD) return 'queue';
  return build >= ROUTER_BUSY_KEPT_BUILD ? 'refuse' : 'evict';
}

export class RouterQueue {
  readonly #entries: Entry[] = [];

  /** `join`: a second request for a queued model only raises its waiters. */
  join(model: string): void {
    const entry = this.#find(model);
    if (entry !== undefined) entry.waiters++;
    else this.#entries.push({ model, waiters: 1, slotPending: false, loading: false });
  }

  /** `leave`: a waiter went away; the entry goes with its last waiter. */
  leave(model: string): void {
    const index = this.#entries.findIndex((e) => e.model === model);
    if (index < 0) return;
    const entry = this.#entries[index]!;
    if (--entry.waiters <= 0) this.#entries.splice(index, 1);
  }

  empty(): boolean {
    return this.#entries.length === 0;
  }

  /** `try_claim`: the front entry is this model's, nobody loads it yet, and there is room. */
  tryClaim(model: string, hasRoom: boolean): boolean {
    const front = this.#entries[0];
    if (front === undefined || front.model !== model || front.loading || !hasRoom) return false;
    front.loading = true;
    return true;
  }

  /** `claim_done`: a started load drops the entry; a load that did not go through stays in line. */
  claimDone(model: string, ok: boolean): void {
    const index = this.#entries.findIndex((e) => e.model === model);
    if (index < 0) return;
    if (ok) this.#entries.splice(index, 1);
    else this.#entries[index]!.loading = false;
  }

  /** `mark_slot_pending`: a model is on its way out for this entry. */
  markSlotPending(model: string): void {
    const entry = this.#find(model);
    if (entry !== undefined) entry.slotPending = true;
  }

  /**
   * `on_model_idle`'s decision: whether `model`, whose last request just ended, gives its slot up to
   * the queue (and then marks the first entry without a pending slot). Not when nothing queued needs
   * a slot, when enough are on their way already, or when the queue wants this very model.
   */
  givesUpSlot(model: string, running: number, modelsMax: number, idleAndReady: boolean): boolean {
    if (modelsMax <= 0 || this.#entries.length === 0) return false;
    const promised = this.#entries.filter((e) => !needsSlot(e)).length;
    if (!this.#entries.some(needsSlot)) return false;
    if (running - promised < modelsMax) return false;
    if (this.#find(model) !== undefined || !idleAndReady) return false;
    const first = this.#entries.find((e) => !e.slotPending);
    if (first !== undefined) first.slotPending = true;
    return true;
  }

  /** The models queued, front first. */
  models(): string[] {
    return this.#entries.map((e) => e.model);
  }

  #find(model: string): Entry | undefined {
    return this.#entries.find((e) => e.model === model);
  }
}

/** A slot is already coming for the entry, or already taken by its load. */
function needsSlot(entry: Entry): boolean {
  return !entry.slotPending && !entry.loading;
}
