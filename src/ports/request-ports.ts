// The ports one host of the request plane is given, together: the main thread's are the owners
// themselves (the Scheduler, the registry, the ledger), a worker's speak over its MessagePort
// (workers/owner-ports.ts).

import type { NodeRegistry } from '#src/nodes/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { TenantLedger } from '#src/tenants/index.ts';
import type { AdmissionPort } from './admission.ts';
import type { FleetView } from './fleet-view.ts';
import type { FleetReports } from './fleet-reports.ts';
import type { SitesPort } from './sites.ts';
import { ledgerTenantAdmission, type TenantAdmissionPort } from './tenant-admission.ts';

export interface RequestPorts {
  readonly admission: AdmissionPort;
  readonly fleet: FleetView;
  readonly reports: FleetReports;
  /** The tenants' limits ([tenants]); asked only by the tenants' request gates. */
  readonly tenants: TenantAdmissionPort;
  /** [mesh] only; absent = this gateway runs alone. */
  readonly sites: SitesPort | undefined;
}

export interface InThreadOwner {
  readonly scheduler: Pick<Scheduler, 'admit' | 'hasAlternative'>;
  /** The gateway's one limits ledger. */
  readonly ledger: Pick<TenantLedger, 'admit'>;
  /** [cluster]: tenant admission counted across replicas (undefined = the ledger alone). */
  readonly admitTenant?: TenantAdmissionPort['admitTenant'] | undefined;
  /** The registry is the in-thread fleet view and fleet reports (its `modelVanished` re-lists the node). */
  readonly registry: Pick<
    NodeRegistry,
    | 'views'
    | 'freshViews'
    | 'snapshot'
    | 'view'
    | 'learnContext'
    | 'learnTokenRatio'
    | 'learnDecodeRate'
    | 'learnLackingEndpoint'
    | 'modelVanished'
  >;
  readonly sites: SitesPort | undefined;
  /** Where an answer's node is remembered for `previous_response_id` (the selection policies' session table). */
  readonly learnAnswerNode?: FleetReports['learnAnswerNode'];
}

/**
 * The registry's reports, and the answers' nodes to routing: one FleetReports. Bound, not wrapped:
 * an answer's reports call the registry directly, through no function of this file.
 */
function ownerReports(registry: InThreadOwner['registry'], learnAnswerNode: FleetReports['learnAnswerNode']): FleetReports {
  if (learnAnswerNode === undefined) return registry;
  return {
    learnContext: registry.learnContext.bind(registry),
    learnTokenRatio: registry.learnTokenRatio.bind(registry),
    learnDecodeRate: registry.learnDecodeRate.bind(registry),
    modelVanished: registry.modelVanished.bind(registry),
    learnLackingEndpoint: registry.learnLackingEndpoint.bind(registry),
    learnAnswerNode,
  };
}

export function inThreadPorts(owner: InThreadOwner): RequestPorts {
  return {
    admission: owner.scheduler,
    fleet: owner.registry,
    reports: ownerReports(owner.registry, owner.learnAnswerNode),
    tenants: ledgerTenantAdmission(owner.ledger, owner.admitTenant),
    sites: owner.sites,
  };
}
