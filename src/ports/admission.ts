// The admission port: how the request plane asks for a node. The owner of every lease (the main
// thread's Scheduler, which is the in-thread port itself) routes, claims and queues; a request
// worker reaches it over its MessagePort (workers/remote-admission.ts). Both implementations pass
// test/contract/ports.contract.test.ts.

import type { RouteRequest } from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';

export interface AdmissionPort {
  /**
   * Routes one attempt of a request (`firstAttempt` false for failovers): admitted (one lease,
   * released once; a load ticket settled once), queued until then, or refused with a reason and
   * every exclusion. Never rejects; an aborted `signal` ends a wait with `aborted`. An admission
   * decided at once may come as it is, without a promise (the in-thread Scheduler's fast path).
   */
  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Admission | Promise<Admission>;
  /**
   * Whether routing has another node for this request, counting busy ones (worth waiting for).
   * Synchronous: asked while a node's answer head is being judged. Runs the scheduler's own
   * pipeline (router-room included) over what this side knows of the fleet.
   */
  hasAlternative(req: RouteRequest): boolean;
}
