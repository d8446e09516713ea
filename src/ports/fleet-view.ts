// The fleet-view port: what the request plane reads of the nodes between admissions (prompt
// sizing, model names, refusal wording, /v1/models, /health). In-thread: the registry itself
// (nodes/registry.ts); in a worker: the mirror the owner pushes (workers/view-mirror.ts).

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';

export interface FleetView {
  /** Every node's frozen view, in config order. */
  views(): readonly NodeView[];
  /**
   * The views that may serve `model` (list it, or have no listing yet), in config order: what a
   * request reads about its model instead of every view (nodes/model-offers.ts). Without it a reader
   * takes `views()`, with the same answers.
   */
  offering?(model: string): readonly NodeView[];
  /** Up-to-the-moment copies (last probe, last listing) for the status-only /health. */
  freshViews(): readonly NodeView[];
  /** The fleet as routing sees it now (a worker's mirror shows only what its owner pushed). */
  snapshot(): RoutingSnapshot;
  view(name: string): NodeView | undefined;
}
