// The owner's side of one worker's tenant admissions: each `admit` (tenant-messages.ts) is judged by the one
// ledger (so limits hold exactly across workers), its ticket kept by the worker's id until the
// worker settles it. With [cluster], a limited tenant's admission is the shared one (asynchronous:
// the store judges it across replicas); a settle that arrives while it is still being judged is
// applied once it is. A worker that goes away has every open ticket settled as served without a
// stated usage (its reservation charged: the answer may well have reached its client).

import type { TenantAdmission, TenantAsk, TenantOutcome } from './admission-types.ts';
import type { TenantLedger } from './ledger.ts';
import type { TenantOwnerMessage } from './tenant-messages.ts';

const GONE: TenantOutcome = { served: true, promptTokens: undefined, completionTokens: undefined };

/** [cluster]'s tenant admission across replicas (the admission port's admitTenant). */
export type SharedTenantAdmit = (ask: TenantAsk, limited: boolean) => Promise<TenantAdmission>;

export class TenantDesk {
  readonly #ledger: Pick<TenantLedger, 'admit'>;
  readonly #shared: SharedTenantAdmit | undefined;
  readonly #send: (message: TenantOwnerMessage) => void;
  readonly #tickets = new Map<number, (outcome: TenantOutcome) => void>();
  /** Shared admissions still being judged, with a settle that came meanwhile. */
  readonly #judging = new Map<number, TenantOutcome | undefined>();
  #closed = false;

  constructor(ledger: Pick<TenantLedger, 'admit'>, send: (message: TenantOwnerMessage) => void, shared?: SharedTenantAdmit) {
    this.#ledger = ledger;
    this.#send = send;
    this.#shared = shared;
  }

  /** Open tickets (requests of this worker admitted and not yet ended). */
  open(): number {
    return this.#tickets.size + this.#judging.size;
  }

  admit(id: number, ask: TenantAsk, answer: boolean): void {
    if (this.#closed || this.#tickets.has(id) || this.#judging.has(id)) return;
    const shared = this.#shared;
    // A worker that saw no limits did not wait: counted by the ledger alone, whatever the limits.
    if (shared === undefined || !answer) {
      const { decision, ticket } = this.#ledger.admit(ask, !answer);
      if (decision.kind === 'admitted') this.#tickets.set(id, (outcome) => ticket.settle(outcome));
      if (answer) this.#send({ t: 'decided', id, decision });
      return;
    }
    this.#judging.set(id, undefined);
    void shared(ask, true).then((admission) => {
      const early = this.#judging.get(id);
      this.#judging.delete(id);
      if (admission.kind === 'limited') return this.#send({ t: 'decided', id, decision: admission });
      if (early !== undefined || this.#closed) return admission.settle(early ?? GONE);
      this.#tickets.set(id, admission.settle);
      this.#send({ t: 'decided', id, decision: { kind: 'admitted', figures: admission.figures } });
    });
  }

  settle(id: number, outcome: TenantOutcome): void {
    if (this.#judging.has(id)) {
      this.#judging.set(id, outcome);
      return;
    }
    const settle = this.#tickets.get(id);
    this.#tickets.delete(id);
    settle?.(outcome);
  }

  close(): void {
    this.#closed = true;
    for (const id of [...this.#tickets.keys()]) this.settle(id, GONE);
  }
}
