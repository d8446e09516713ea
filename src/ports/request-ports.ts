// The ports one host of the request plane is given, together: the main thread's are the owners
// themselves (the Scheduler, the registry), a worker's speak over its MessagePort
// (workers/owner-ports.ts). What an optional feature gives the plane (the tenants' admission, the
// mesh's sites link) is its own port, carried under its feature's key (core/part-key.ts): these
// ports name no feature, and an absent feature gives none.

import type { Parts } from '#src/core/part-key.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import type { Scheduler } from '#src/scheduler/index.ts';
import type { AdmissionPort } from './admission.ts';
import type { FleetView } from './fleet-view.ts';
import type { FleetReports } from './fleet-reports.ts';
import type { SessionPort } from './session-port.ts';

export interface RequestPorts {
  readonly admission: AdmissionPort;
  readonly fleet: FleetView;
  readonly reports: FleetReports;
  /** The features' ports, each under its feature's key; read only by the request plane's feature list. */
  readonly features: Parts;
  /** The session table, for a target source that may own a session (a remote site); absent = none (a worker's plane). */
  readonly sessions?: SessionPort | undefined;
  /** The one memory of owners, read (routing/policies/sessions.ts `answerOwner`); absent: none known here (a worker). */
  readonly answerOwner?: AnswerOwner | undefined;
}

/** The node that produced the answer `answerId` for `tenant`, if remembered. */
export type AnswerOwner = (tenant: string, answerId: string) => string | undefined | Promise<string | undefined>;

export interface InThreadOwner {
  readonly scheduler: Pick<Scheduler, 'admit' | 'hasAlternative'>;
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
  /** The features' in-thread ports (gateway/features.ts composes them), each under its key. */
  readonly features: Parts;
  /** Where an answer's node is remembered for `previous_response_id` (the selection policies' session table). */
  readonly learnAnswerNode?: FleetReports['learnAnswerNode'];
  /** The session table itself (the selection policies'). */
  readonly sessions?: SessionPort | undefined;
  /** Where the node that produced an answer is read back (the same table). */
  readonly answerOwner?: AnswerOwner;
}

/**
 * The registry's reports, and the answers' nodes to routing: one FleetReports. Bound, not wrapped:
 * an answer's reports call the registry directly, through no function of this file.
 */
export function ownerReports(
  registry: InThreadOwner['registry'],
  learnAnswerNode: FleetReports['learnAnswerNode'],
): FleetReports {
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
    features: owner.features,
    sessions: owner.sessions,
    answerOwner: owner.answerOwner,
  };
}
