// The owner's side of one worker's admissions: it runs the worker's admit asks through the one
// Scheduler (so leases and per-model FIFO queues are exact across workers), keeps every lease and
// load ticket the worker holds by id until the worker returns it, and returns them all itself if
// the worker goes away, so a dead worker never leaks a slot.

import type { Admission, LoadOutcome, LoadTicket, QueueSettings, Scheduler } from '#src/scheduler/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { OwnerMessage } from './protocol.ts';

export interface LeaseDeskOptions {
  readonly scheduler: Pick<Scheduler, 'admit'>;
  readonly send: (message: OwnerMessage) => void;
  /** Runs just before an admission is answered: the worker must know the admitted node's current view. */
  readonly beforeAdmitted: () => void;
  readonly onError: (error: unknown) => void;
}

export class LeaseDesk {
  readonly #options: LeaseDeskOptions;
  /** Admissions asked for and not yet decided (queued, waking, refreshing), by the worker's id. */
  readonly #deciding = new Map<number, AbortController>();
  readonly #leases = new Map<number, () => void>();
  readonly #tickets = new Map<number, LoadTicket>();
  #admitted = 0;
  #closed = false;

  constructor(options: LeaseDeskOptions) {
    this.#options = options;
  }

  /** Leases the worker holds now. */
  held(): number {
    return this.#leases.size;
  }

  /** Admissions granted to the worker so far. */
  admitted(): number {
    return this.#admitted;
  }

  admit(id: number, req: RouteRequest, settings: QueueSettings, firstAttempt: boolean): void {
    if (this.#closed || this.#deciding.has(id) || this.#leases.has(id)) return;
    const asked = new AbortController();
    this.#deciding.set(id, asked);
    // The scheduler never throws nor rejects today; if it ever does, the worker must not hang.
    let admitting: Admission | Promise<Admission>;
    try {
      admitting = this.#options.scheduler.admit(req, settings, asked.signal, firstAttempt);
    } catch (error) {
      this.#failed(id, error);
      return;
    }
    if (!(admitting instanceof Promise)) this.#answer(id, admitting);
    else
      admitting.then(
        (admission) => this.#answer(id, admission),
        (error: unknown) => this.#failed(id, error),
      );
  }

  #failed(id: number, error: unknown): void {
    this.#deciding.delete(id);
    this.#options.send({ t: 'refused', id, reason: 'unavailable', excluded: [], waitedMs: 0 });
    this.#options.onError(error);
  }

  #answer(id: number, admission: Admission): void {
    this.#deciding.delete(id);
    if (admission.kind === 'refused') {
      const { reason, excluded, waitedMs } = admission;
      this.#options.send({ t: 'refused', id, reason, excluded, waitedMs });
      return;
    }
    if (this.#closed) {
      admission.release();
      admission.load?.settle('failed');
      return;
    }
    this.#admitted += 1;
    this.#leases.set(id, admission.release);
    if (admission.load !== undefined) this.#tickets.set(id, admission.load);
    this.#options.beforeAdmitted();
    this.#options.send({
      t: 'admitted',
      id,
      node: admission.node.spec.name,
      route: admission.route,
      waitedMs: admission.waitedMs,
      loadTimeoutMs: admission.load?.timeoutMs,
    });
  }

  /** The worker's client left while its request was still being decided. */
  abort(id: number): void {
    this.#deciding.get(id)?.abort();
  }

  release(id: number): void {
    const release = this.#leases.get(id);
    this.#leases.delete(id);
    release?.();
  }

  settle(id: number, outcome: LoadOutcome): void {
    const ticket = this.#tickets.get(id);
    this.#tickets.delete(id);
    ticket?.settle(outcome);
  }

  /** The worker is gone: every decision it waits for is dropped, every lease it held comes back. */
  close(): void {
    this.#closed = true;
    for (const asked of this.#deciding.values()) asked.abort();
    for (const id of [...this.#leases.keys()]) this.release(id);
    for (const id of [...this.#tickets.keys()]) this.settle(id, 'failed');
  }
}
