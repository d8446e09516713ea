// The last finished requests, newest kept: a fixed-size ring of request records on the owner
// thread, fed by `proxy:request-finished` whether or not the request log is on (with [server]
// workers > 1 the workers' events are bridged here: event-bridge.ts). GET /admin/requests (the
// dashboard's Requests view) reads it; gateway/parts.ts builds it.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { NO_REPORTS, type ReportsTable } from '#src/core/request-fields.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import { readRequestQuery, recordMatches, type RequestQuery } from './request-query.ts';
import { requestRecord, type RequestRecord } from './request-record.ts';

/** Requests kept (about 1–3 KB each). */
export const REQUEST_RING_SIZE = 1_000;

export interface RequestsAnswer {
  /** Newest first, at most `limit`. */
  readonly requests: readonly RequestRecord[];
  /** The seq of the newest request finished so far (0: none yet): the next `after`. */
  readonly latest: number;
  /** How many the ring holds now, and at most. */
  readonly kept: number;
  readonly capacity: number;
}

/** A finished request as it came; its record is built the first time a query reads it (nothing per request otherwise). */
interface Slot {
  readonly seq: number;
  readonly event: ProxyEvents['proxy:request-finished'];
  readonly at: number;
  record: RequestRecord | undefined;
}

export class RequestRing {
  readonly #slots: (Slot | undefined)[];
  #seq = 0;
  readonly #events: EventBus<ProxyEvents>;
  readonly #off: () => void;

  readonly #reports: () => ReportsTable;

  /** `reports`: what each feature's fields of a request add to its record (the feature list's, read when a record is built). */
  constructor(
    clock: Clock,
    events: EventBus<ProxyEvents>,
    capacity = REQUEST_RING_SIZE,
    reports: () => ReportsTable = () => NO_REPORTS,
  ) {
    this.#reports = reports;
    this.#slots = new Array<Slot | undefined>(capacity).fill(undefined);
    this.#events = events;
    // Stored when the ring is read (or every DEFERRED_CAPACITY requests), with each request's own end time.
    this.#off = events.deferred(
      'proxy:request-finished',
      (event, at) => {
        this.#seq += 1;
        this.#slots[(this.#seq - 1) % capacity] = { seq: this.#seq, event, at, record: undefined };
      },
      clock,
    );
  }

  /** GET /admin/requests: the query read from its parameters (a bad one named), then answered. */
  read(params: URLSearchParams): { readonly answer: RequestsAnswer } | { readonly error: string; readonly param: string } {
    const read = readRequestQuery(params);
    return 'error' in read ? read : { answer: this.query(read.query) };
  }

  query(query: RequestQuery): RequestsAnswer {
    this.#events.flush();
    const capacity = this.#slots.length;
    const kept = Math.min(this.#seq, capacity);
    const out: RequestRecord[] = [];
    for (let seq = this.#seq; seq > this.#seq - kept && seq > query.after && out.length < query.limit; seq -= 1) {
      const slot = this.#slots[(seq - 1) % capacity];
      if (slot === undefined) continue;
      slot.record ??= requestRecord(slot.event, slot.seq, slot.at, this.#reports);
      if (recordMatches(query, slot.record)) out.push(slot.record);
    }
    return { requests: out, latest: this.#seq, kept, capacity };
  }

  close(): void {
    this.#off();
  }
}
