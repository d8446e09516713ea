// One model's queue: `interactive` before `standard` before `batch`, and within a class the
// tenants share by weight (class-lane.ts). Aging keeps a lower class from waiting forever: a
// tenant's oldest waiting request that goes `agingMs` without being served is raised one class
// (batch → standard → interactive), where it is tagged as a newcomer of its tenant and takes its
// turn by weight; its clock restarts there. Only a tenant's oldest request ages, so a tenant with a
// thousand queued batch requests competes above its class with one of them, never with all.
// Shedding: in a full queue, the newest request of the lowest class below a newcomer's makes room.
// Plain bookkeeping; the scheduler decides when the head may try again and what a leaver is told.

import { TENANT_PRIORITIES, type TenantPriority } from '#src/core/tenant-class.ts';
import type { QueueTenant } from '#src/routing/index.ts';
import { ClassLane, type LaneEntry } from './class-lane.ts';
import { IndexedHeap } from './indexed-heap.ts';

/** One model's queue: waiting requests by priority class and by tenant (GET /admin/tenants, /admin/explain, the tenant gauges). */
export interface ModelQueueReport {
  readonly byClass: Readonly<Record<TenantPriority, number>>;
  readonly byTenant: Readonly<Record<string, number>>;
}

/** How a request stands in the queue: whose it is, what it costs, when it came, how it ages. */
export interface QueueTicket {
  readonly tenant: QueueTenant;
  /** Estimated tokens: the prompt's upper bound + max_tokens or the completion reserve. */
  readonly cost: number;
  readonly enteredAtMs: number;
  /** routing.queue_aging of the request's settings; 0 = it is never raised. */
  readonly agingMs: number;
}

interface Entry<T> extends LaneEntry {
  readonly item: T;
  readonly priority: TenantPriority;
  readonly agingMs: number;
  /** The class it is queued in now: 0 interactive, 1 standard, 2 batch. */
  rank: number;
  /** Since when it has waited as its tenant's oldest request in its class (aging counts from here). */
  agingFromMs: number;
}

const rankOf = (priority: TenantPriority): number => TENANT_PRIORITIES.indexOf(priority);
const dueMs = (entry: Entry<unknown>): number => entry.agingFromMs + entry.agingMs;
const ages = (entry: Entry<unknown>): boolean => entry.agingMs > 0 && entry.rank > 0;

export class FairQueue<T> {
  readonly #lanes: readonly ClassLane<Entry<T>>[] = TENANT_PRIORITIES.map(() => new ClassLane<Entry<T>>());
  /** Each tenant's waiting requests in arrival order: the first one is the one that ages. */
  readonly #flows = new Map<string, Set<Entry<T>>>();
  /** The tenants' oldest requests that may be raised, by when. */
  readonly #aging = new IndexedHeap<Entry<T>>((a, b) => dueMs(a) < dueMs(b) || (dueMs(a) === dueMs(b) && a.seq < b.seq));
  readonly #entries = new Map<T, Entry<T>>();
  #seq = 0;

  get size(): number {
    return this.#entries.size;
  }

  /** The request served next: the fair-share head of the highest class with someone waiting. */
  head(): T | undefined {
    for (const lane of this.#lanes) {
      const entry = lane.head();
      if (entry !== undefined) return entry.item;
    }
    return undefined;
  }

  push(item: T, ticket: QueueTicket): void {
    if (this.#entries.has(item)) return;
    const priority = ticket.tenant.priority;
    const entry: Entry<T> = {
      item,
      tenant: ticket.tenant.name,
      weight: ticket.tenant.weight > 0 ? ticket.tenant.weight : 1,
      cost: Math.max(1, ticket.cost),
      seq: this.#seq++,
      start: 0,
      finish: 0,
      priority,
      agingMs: ticket.agingMs,
      rank: rankOf(priority),
      agingFromMs: ticket.enteredAtMs,
    };
    this.#entries.set(item, entry);
    this.#lanes[entry.rank]?.add(entry);
    const flow = this.#flows.get(entry.tenant) ?? new Set<Entry<T>>();
    flow.add(entry);
    this.#flows.set(entry.tenant, flow);
    if (flow.size === 1 && ages(entry)) this.#aging.push(entry);
  }

  /** `item` got its turn (it was the head): its class's virtual time moves on. */
  served(item: T, nowMs: number): boolean {
    const entry = this.#take(item, nowMs);
    return entry !== undefined && (this.#lanes[entry.rank]?.served(entry) ?? false);
  }

  /** `item` left unserved (timeout, abort, shed); returns whether it was there. */
  remove(item: T, nowMs: number): boolean {
    const entry = this.#take(item, nowMs);
    return entry !== undefined && (this.#lanes[entry.rank]?.remove(entry) ?? false);
  }

  /** Raises every tenant's oldest request whose aging time came by `nowMs` (one overdue long enough climbs twice). */
  age(nowMs: number): void {
    for (let entry = this.#aging.peek(); entry !== undefined && dueMs(entry) <= nowMs; entry = this.#aging.peek()) {
      this.#aging.remove(entry);
      this.#lanes[entry.rank]?.remove(entry);
      entry.rank -= 1;
      entry.agingFromMs = dueMs(entry);
      this.#lanes[entry.rank]?.add(entry);
      if (ages(entry)) this.#aging.push(entry);
    }
  }

  /**
   * Who makes room for a newcomer of `priority` in a full queue: the newest request of the lowest
   * class below it (the class it is queued in now: one raised by aging has earned its place);
   * undefined = none is lower. It stays queued: the caller refuses it.
   */
  victimFor(priority: TenantPriority): T | undefined {
    for (let rank = this.#lanes.length - 1; rank > rankOf(priority); rank -= 1) {
      let newest: Entry<T> | undefined;
      for (const entry of this.#lanes[rank]?.entries() ?? []) if (newest === undefined || entry.seq > newest.seq) newest = entry;
      if (newest !== undefined) return newest.item;
    }
    return undefined;
  }

  /** The waiting requests by their tenant's class and by tenant. */
  report(): ModelQueueReport {
    const byClass: Record<TenantPriority, number> = { interactive: 0, standard: 0, batch: 0 };
    const byTenant: Record<string, number> = {};
    for (const entry of this.#entries.values()) {
      byClass[entry.priority] += 1;
      byTenant[entry.tenant] = (byTenant[entry.tenant] ?? 0) + 1;
    }
    return { byClass, byTenant };
  }

  /** The request that has waited longest (whatever its place in the order). */
  oldest(): T | undefined {
    return this.#entries.keys().next().value;
  }

  /** Whether any waiting request matches (in no particular order). */
  some(match: (item: T) => boolean): boolean {
    for (const item of this.#entries.keys()) if (match(item)) return true;
    return false;
  }

  /** The class a waiting request is queued in now (aging may have raised it); undefined = not queued. */
  classOf(item: T): TenantPriority | undefined {
    const entry = this.#entries.get(item);
    return entry === undefined ? undefined : TENANT_PRIORITIES[entry.rank];
  }

  /** Forgets `item`; its tenant's next request becomes the one that ages, from now. */
  #take(item: T, nowMs: number): Entry<T> | undefined {
    const entry = this.#entries.get(item);
    if (entry === undefined) return undefined;
    this.#entries.delete(item);
    this.#aging.remove(entry);
    const flow = this.#flows.get(entry.tenant);
    const wasOldest = flow?.values().next().value === entry;
    flow?.delete(entry);
    if (flow?.size === 0) this.#flows.delete(entry.tenant);
    const next = wasOldest ? flow?.values().next().value : undefined;
    if (next !== undefined) {
      next.agingFromMs = Math.max(next.agingFromMs, nowMs);
      if (ages(next)) this.#aging.push(next);
    }
    return entry;
  }
}
