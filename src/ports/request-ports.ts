// The ports one host of the request plane is given, together: the main thread's come from the
// Scheduler and the registry (below), a worker's from its MessagePort (workers/owner-ports.ts).

import type { NodeRegistry } from '#src/nodes/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { TenantLedger } from '#src/tenants/index.ts';
import { schedulerAdmission, type AdmissionPort } from './admission.ts';
import { registryFleetView, type FleetView } from './fleet-view.ts';
import { registryReports, type FleetReports } from './fleet-reports.ts';
import type { SitesPort } from './sites.ts';

export interface RequestPorts {
  readonly admission: AdmissionPort;
  readonly fleet: FleetView;
  readonly reports: FleetReports;
  /** [mesh] only; absent = this gateway runs alone. */
  readonly sites: SitesPort | undefined;
}

export interface InThreadOwner {
  readonly scheduler: Pick<Scheduler, 'admit' | 'hasAlternative'>;
  /** The gateway's one limits ledger. */
  readonly ledger: Pick<TenantLedger, 'admit'>;
  /** [cluster]: tenant admission counted across replicas (undefined = the ledger alone). */
  readonly admitTenant?: AdmissionPort['admitTenant'] | undefined;
  readonly registry: Pick<
    NodeRegistry,
    'views' | 'freshViews' | 'snapshot' | 'view' | 'learnContext' | 'learnTokenRatio' | 'learnDecodeRate' | 'learnLackingEndpoint'
  >;
  /** Re-lists a node whose model vanished. */
  readonly relist: (node: string) => void;
  readonly sites: SitesPort | undefined;
}

export function inThreadPorts(owner: InThreadOwner): RequestPorts {
  return {
    admission: schedulerAdmission(owner.scheduler, owner.ledger, owner.admitTenant),
    fleet: registryFleetView(owner.registry),
    reports: registryReports(owner.registry, owner.relist),
    sites: owner.sites,
  };
}
