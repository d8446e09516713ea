// The tenants' half of a request worker's link (core/cross-thread.ts): on the owner, one ledger
// desk per worker (tenant-desk.ts: the one ledger judges every worker's tenants, [cluster] counts
// limited ones across replicas); in the worker, the tenant-admission port that asks it
// (worker-admission.ts), given to the worker's request plane under the tenants' key.

import type { OwnerSide, WorkerSide } from '#src/core/cross-thread.ts';
import type { TenantLedger } from './ledger.ts';
import { TENANT_ADMISSION } from './admission-port.ts';
import { TenantDesk, type SharedTenantAdmit } from './tenant-desk.ts';
import { TENANTS_CROSSING, type TenantOwnerMessage, type TenantWorkerMessage } from './tenant-messages.ts';
import { WorkerTenantAdmission } from './worker-admission.ts';

/** The owner's side: every worker's tenant admissions judged by `ledger` (`shared`: [cluster]'s, for limited tenants). */
export function tenantsOwnerSide(ledger: Pick<TenantLedger, 'admit'>, shared?: SharedTenantAdmit): OwnerSide {
  return {
    name: TENANTS_CROSSING,
    init: () => null,
    link: (send) => {
      const desk = new TenantDesk(ledger, send, shared);
      return {
        receive: (raw) => {
          const message = raw as TenantWorkerMessage;
          if (message.t === 'admit') desk.admit(message.id, message.ask, message.answer);
          else desk.settle(message.id, message.outcome);
        },
        close: () => desk.close(),
      };
    },
  };
}

/** The worker's side: its tenant-admission port, over the owner's desk. */
export function tenantsWorkerSide(send: (message: unknown) => void): WorkerSide {
  const admission = new WorkerTenantAdmission(send);
  return { receive: (message) => admission.receive(message as TenantOwnerMessage), port: [TENANT_ADMISSION, admission] };
}
