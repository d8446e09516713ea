// The tenant-admission port ([tenants]): how the request plane judges a request against its
// tenant's limits. The owner holds the one limits ledger (ledger.ts), so a tenant's limits hold
// exactly however many workers ask; a request worker asks it over its MessagePort (worker-admission.ts,
// the tenants' half of a worker's link), [cluster] counts limited tenants across replicas. The port
// reaches the request plane under the tenants' key (TENANT_ADMISSION): the plane's ports name no feature.

import { partKey, type PartKey } from '#src/core/part-key.ts';
import type { TenantAdmission, TenantAsk } from './admission-types.ts';
import type { TenantLedger } from './ledger.ts';
import { ledgerAdmission } from './ledger-admission.ts';

export interface TenantAdmissionPort {
  /**
   * Judges a request against its tenant's limits (concurrency → request rate → token rate →
   * daily budget) and holds its reservation until settled once. `limited` false (the tenant has
   * no limit): admitted without waiting for the ledger's owner — still counted there. Never rejects.
   */
  admitTenant(ask: TenantAsk, limited: boolean): Promise<TenantAdmission>;
}

/** The tenant-admission port among a request plane's feature ports. */
export const TENANT_ADMISSION: PartKey<TenantAdmissionPort> = partKey('tenant admission');

/** The in-thread tenant admission: the ledger itself (`shared`: [cluster]'s tenant admission instead). */
export function ledgerTenantAdmission(
  ledger: Pick<TenantLedger, 'admit'>,
  shared?: TenantAdmissionPort['admitTenant'],
): TenantAdmissionPort {
  if (shared !== undefined) return { admitTenant: shared };
  const admit = ledgerAdmission(ledger);
  return { admitTenant: (ask) => admit(ask) };
}
