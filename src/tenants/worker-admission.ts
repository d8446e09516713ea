// A request worker's tenant-admission port: a tenant's limits are the owner's ledger's to judge (one
// round trip: `admit`, then the owner's `decided`); a tenant without limits costs none — the worker
// tells the owner and goes on. Settling a reservation is a message back, sent once.

import type { TenantAdmission, TenantAsk, TenantDecision, TenantOutcome } from './admission-types.ts';
import type { TenantAdmissionPort } from './admission-port.ts';
import type { TenantOwnerMessage, TenantWorkerMessage } from './tenant-messages.ts';

export class WorkerTenantAdmission implements TenantAdmissionPort {
  readonly #send: (message: TenantWorkerMessage) => void;
  /** Tenant admissions waiting for the owner's ledger, by id. */
  readonly #judging = new Map<number, (decision: TenantDecision) => void>();
  #nextId = 0;

  constructor(send: (message: TenantWorkerMessage) => void) {
    this.#send = send;
  }

  admitTenant(ask: TenantAsk, limited: boolean): Promise<TenantAdmission> {
    this.#nextId += 1;
    const id = this.#nextId;
    const settle = this.#settler(id);
    if (!limited) {
      this.#send({ t: 'admit', id, ask, answer: false });
      return Promise.resolve({ kind: 'admitted', figures: undefined, settle });
    }
    return new Promise<TenantAdmission>((resolve) => {
      this.#judging.set(id, (decision) =>
        resolve(decision.kind === 'limited' ? decision : { kind: 'admitted', figures: decision.figures, settle }),
      );
      this.#send({ t: 'admit', id, ask, answer: true });
    });
  }

  /** The owner's ledger's answer to an admit. */
  receive(message: TenantOwnerMessage): void {
    const resolve = this.#judging.get(message.id);
    this.#judging.delete(message.id);
    resolve?.(message.decision);
  }

  /** Admissions still being judged by the owner. */
  pending(): number {
    return this.#judging.size;
  }

  #settler(id: number): (outcome: TenantOutcome) => void {
    let settled = false;
    return (outcome) => {
      if (settled) return;
      settled = true;
      this.#send({ t: 'settle', id, outcome });
    };
  }
}
