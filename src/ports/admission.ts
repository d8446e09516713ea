// The admission port: how the request plane asks for a node. The owner of every lease (the main
// thread's Scheduler) routes, claims and queues; a request worker reaches it over its MessagePort
// (workers/remote-admission.ts). Both implementations pass test/contract/ports.contract.test.ts.
// Tenant admission is part of the same port: the owner holds the one limits ledger
// (tenants/ledger.ts), so a tenant's limits hold exactly however many workers ask.

import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings, Scheduler } from '#src/scheduler/index.ts';
import { ledgerAdmission, type TenantAdmission, type TenantAsk, type TenantLedger } from '#src/tenants/index.ts';

export interface AdmissionPort {
  /**
   * Routes one attempt of a request (`firstAttempt` false for failovers): admitted (one lease,
   * released once; a load ticket settled once), queued until then, or refused with a reason and
   * every exclusion. Never rejects; an aborted `signal` ends a wait with `aborted`.
   */
  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Promise<Admission>;
  /**
   * Whether routing has another node for this request, counting busy ones (worth waiting for).
   * Synchronous: asked while a node's answer head is being judged. Runs the scheduler's own
   * pipeline (router-room included) over what this side knows of the fleet.
   */
  hasAlternative(req: RouteRequest): boolean;
  /**
   * Judges a request against its tenant's limits (concurrency → request rate → token rate →
   * daily budget) and holds its reservation until settled once. `limited` false (the tenant has
   * no limit): admitted without waiting for the ledger's owner — still counted there. Never rejects.
   */
  admitTenant(ask: TenantAsk, limited: boolean): Promise<TenantAdmission>;
}

/** The in-thread admission: the Scheduler and the ledger themselves (`shared`: [cluster]'s tenant admission instead). */
export function schedulerAdmission(
  scheduler: Pick<Scheduler, 'admit' | 'hasAlternative'>,
  ledger: Pick<TenantLedger, 'admit'>,
  shared?: AdmissionPort['admitTenant'],
): AdmissionPort {
  const admitTenant = ledgerAdmission(ledger);
  return {
    admit: (req, settings, signal, firstAttempt) => scheduler.admit(req, settings, signal, firstAttempt),
    hasAlternative: (req) => scheduler.hasAlternative(req),
    admitTenant: shared ?? ((ask) => admitTenant(ask)),
  };
}
