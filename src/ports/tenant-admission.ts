// The tenant-admission port ([tenants]): how the request plane judges a request against its
// tenant's limits. The owner holds the one limits ledger (tenants/ledger.ts), so a tenant's limits
// hold exactly however many workers ask; a worker asks it over its MessagePort
// (workers/remote-admission.ts), [cluster] counts limited tenants across replicas.

import { ledgerAdmission, type TenantAdmission, type TenantAsk, type TenantLedger } from '#src/tenants/index.ts';

export interface TenantAdmissionPort {
  /**
   * Judges a request against its tenant's limits (concurrency → request rate → token rate →
   * daily budget) and holds its reservation until settled once. `limited` false (the tenant has
   * no limit): admitted without waiting for the ledger's owner — still counted there. Never rejects.
   */
  admitTenant(ask: TenantAsk, limited: boolean): Promise<TenantAdmission>;
}

/** The in-thread tenant admission: the ledger itself (`shared`: [cluster]'s tenant admission instead). */
export function ledgerTenantAdmission(
  ledger: Pick<TenantLedger, 'admit'>,
  shared?: TenantAdmissionPort['admitTenant'],
): TenantAdmissionPort {
  if (shared !== undefined) return { admitTenant: shared };
  const admit = ledgerAdmission(ledger);
  return { admitTenant: (ask) => admit(ask) };
}
