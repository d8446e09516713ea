// The fleet-reports port: what the request plane learns from answers and hands to the control
// plane, fire and forget. Each report is applied once, by the registry's owner: in-thread the
// registry itself (nodes/registry.ts); a worker's reports cross its MessagePort (workers/owner-ports.ts).

import type { DecodeSample, RatioSample } from '#src/capacity/index.ts';

export interface FleetReports {
  /** A node's refusal proved its context for a model (remembered for that node and URL alone). */
  learnContext(node: string, url: string, model: string, nCtx: number): void;
  /** An answer's usage gave the bytes per token of a prompt. */
  learnTokenRatio(node: string, url: string, model: string, sample: RatioSample): void;
  /** An answer showed how fast the node generates the model's tokens. */
  learnDecodeRate(node: string, url: string, model: string, sample: DecodeSample): void;
  /** A node said it does not have a model its listing showed: it is listed again. */
  modelVanished(node: string): void;
  /** A node answered an endpoint with a route-level 404 (`said`: its words): it lacks the endpoint until its listing or URL changes. */
  learnLackingEndpoint(node: string, url: string, endpoint: string, said: string): void;
  /**
   * A node produced the answer `answerId` for `tenant` (a Responses `resp_…`): a later request naming
   * it as `previous_response_id` goes back there (routing/policies/sessions.ts). Absent: not learned.
   */
  learnAnswerNode?(tenant: string, answerId: string, node: string): void;
}
