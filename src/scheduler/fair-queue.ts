// One model's queue: `interactive` before `standard` before `batch`, and within a class the
// tenants share by weight (class-lane.ts). Aging: a request that has waited `agingMs` is raised one
// class (batch → standard → interactive, one class per `agingMs` waited), where it is tagged as a
// newcomer of its tenant and shares that class by weight; so it neither waits forever behind a
// busier class nor jumps ahead of everyone. Shedding: when the queue is full, the newest request
// of the lowest class below a newcomer's makes room for it. Plain bookkeeping; the scheduler
// decides when the head may try again and what happens to a request that leaves.

import { TENANT_PRIORITIES, type TenantPriority } from '#src/config/index.ts';
import type { ModelQueueReport } from '#src/tenants/index.ts';
import type { QueueTenant } from '#src/routing/index.ts';
import { ClassLane, type LaneEntry } from './class-lane.ts';
import { IndexedHeap } from './indexed-heap.ts';

/** How a request stands in the queue: whose it is, what it costs, when it came, when it ages. */
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
  readonly enteredAtMs: number;
  readonly agingMs: number;
  /** The class it is queued in now: 0 interactive, 1 standard, 2 batch. */
  rank: number;
}

const rankOf = (priority: TenantPriority): number => TENANT_PRIORITIES.indexOf(priority);

/** When an entry is raised next: one `agingMs` per class it has climbed, plus one. */
function dueMs(entry: Entry<unknown>): number {
  if (entry.agingMs <= 0 || entry.rank === 0) return Infinity;
  return entry.enteredAtMs + entry.agingMs * (rankOf(entry.priority) - entry.rank + 1);
}

export class FairQueue<T> {
  readonly #lanes: readonly ClassLane<Entry<T>>[] = TENANT_PRIORITIES.map(() => new ClassLane<Entry<T>>());
  /** Per class, its entries by when they are raised next (the interactive one stays empty). */
  readonly #aging: readonly IndexedHeap<Entry<T>>[] = TENANT_PRIORITIES.map(
    () => new IndexedHeap<Entry<T>>((a, b) => dueMs(a) < dueMs(b) || (dueMs(a) === dueMs(b) && a.seq < b.seq)),
  );
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
    const weight = ticket.tenant.weight > 0 ? ticket.tenant.weight : 1;
    const entry: Entry<T> = {
      item,
      tenant: ticket.tenant.name,
      weight,
      cost: Math.max(1, ticket.cost),
      seq: this.#seq++,
      start: 0,
      finish: 0,
      priority,
      enteredAtMs: ticket.enteredAtMs,
      agingMs: ticket.agingMs,
      rank: rankOf(priority),
    };
    this.#entries.set(item, entry);
    this.#place(entry);
  }

  /** `item` got its turn (it was the head): its class's virtual time moves on. */
  served(item: T): boolean {
    const entry = this.#take(item);
    return entry !== undefined && (this.#lanes[entry.rank]?.served(entry) ?? false);
  }

  /** `item` left unserved (timeout, abort, shed); returns whether it was there. */
  remove(item: T): boolean {
    const entry = this.#take(item);
    return entry !== undefined && (this.#lanes[entry.rank]?.remove(entry) ?? false);
  }

  /** Raises every request whose aging time has come by `nowMs` (batch first, so one long overdue climbs twice). */
  age(nowMs: number): void {
    for (let rank = this.#lanes.length - 1; rank > 0; rank -= 1) {
      const due = this.#aging[rank];
      for (let entry = due?.peek(); entry !== undefined && dueMs(entry) <= nowMs; entry = due?.peek()) {
        due?.remove(entry);
        this.#lanes[rank]?.remove(entry);
        entry.rank = rank - 1;
        this.#place(entry);
      }
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

  /** The class a waiting request is queued in now (aging may have raised it); undefined = not queued. */
  classOf(item: T): TenantPriority | undefined {
    const entry = this.#entries.get(item);
    return entry === undefined ? undefined : TENANT_PRIORITIES[entry.rank];
  }

  #place(entry: Entry<T>): void {
    this.#lanes[entry.rank]?.add(entry);
    if (dueMs(entry) !== Infinity) this.#aging[entry.rank]?.push(entry);
  }

  #take(item: T): Entry<T> | undefined {
    const entry = this.#entries.get(item);
    if (entry === undefined) return undefined;
    this.#entries.delete(item);
    this.#aging[entry.rank]?.remove(entry);
    return entry;
  }
}
