// The owner's side of one worker's tenant admissions: each `tenant-admit` is judged by the one
// ledger (so limits hold exactly across workers), its ticket kept by the worker's id until the
// worker settles it. A worker that goes away has every open ticket settled as served without a
// stated usage (its reservation charged: the answer may well have reached its client).

import type { LedgerTicket, TenantAsk, TenantLedger, TenantOutcome } from '#src/tenants/index.ts';
import type { OwnerMessage } from './protocol.ts';

const GONE: TenantOutcome = { served: true, promptTokens: undefined, completionTokens: undefined };

export class TenantDesk {
  readonly #ledger: Pick<TenantLedger, 'admit'>;
  readonly #send: (message: OwnerMessage) => void;
  readonly #tickets = new Map<number, LedgerTicket>();
  #closed = false;

  constructor(ledger: Pick<TenantLedger, 'admit'>, send: (message: OwnerMessage) => void) {
    this.#ledger = ledger;
    this.#send = send;
  }

  /** Open tickets (requests of this worker admitted and not yet ended). */
  open(): number {
    return this.#tickets.size;
  }

  admit(id: number, ask: TenantAsk, answer: boolean): void {
    if (this.#closed || this.#tickets.has(id)) return;
    const { decision, ticket } = this.#ledger.admit(ask, !answer);
    if (decision.kind === 'admitted') this.#tickets.set(id, ticket);
    if (answer) this.#send({ t: 'tenant-decided', id, decision });
  }

  settle(id: number, outcome: TenantOutcome): void {
    const ticket = this.#tickets.get(id);
    this.#tickets.delete(id);
    ticket?.settle(outcome);
  }

  close(): void {
    this.#closed = true;
    for (const id of [...this.#tickets.keys()]) this.settle(id, GONE);
  }
}
