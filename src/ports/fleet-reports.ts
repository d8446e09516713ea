// The fleet-reports port: what the request plane learns from answers and hands to the control
// plane, fire and forget. Each report is applied once, by the registry's owner (a worker's reports
// cross its MessagePort: workers/owner-ports.ts).

import type { DecodeSample, RatioSample } from '#src/capacity/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';

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
}

/** The in-thread reports: straight to the registry; a vanished model re-lists the node. */
export function registryReports(
  registry: Pick<NodeRegistry, 'learnContext' | 'learnTokenRatio' | 'learnDecodeRate' | 'learnLackingEndpoint'>,
  relist: (node: string) => void,
): FleetReports {
  return {
    learnLackingEndpoint: (node, url, endpoint, said) => registry.learnLackingEndpoint(node, url, endpoint, said),
    learnContext: (node, url, model, nCtx) => registry.learnContext(node, url, model, nCtx),
    learnTokenRatio: (node, url, model, sample) => registry.learnTokenRatio(node, url, model, sample),
    learnDecodeRate: (node, url, model, sample) => registry.learnDecodeRate(node, url, model, sample),
    modelVanished: (node) => relist(node),
  };
}
