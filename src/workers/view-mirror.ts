// A worker's copy of the fleet: the node views the owner last pushed. The request path reads it for
// what it decides on its own (prompt sizing, refusal wording, whether a failover has somewhere to
// go, /v1/models, /health). Live lease counts are not mirrored: admission is the owner's alone, so
// the mirror's snapshot shows every node idle, and nothing here ever admits a request.

import type { Usage } from '#src/capacity/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { ViewsUpdate } from './protocol.ts';

const IDLE: Usage = Object.freeze({ requests: 0, tokens: 0 });

export class ViewMirror {
  #fleet: ViewsUpdate;
  #byName: ReadonlyMap<string, NodeView>;
  readonly #now: () => number;

  constructor(fleet: ViewsUpdate, now: () => number) {
    this.#fleet = fleet;
    this.#byName = byName(fleet.views);
    this.#now = now;
  }

  update(fleet: ViewsUpdate): void {
    this.#fleet = fleet;
    this.#byName = byName(fleet.views);
  }

  views(): readonly NodeView[] {
    return this.#fleet.views;
  }

  /** The same views: the owner pushes them whenever a routing-relevant figure changes. */
  freshViews(): readonly NodeView[] {
    return this.#fleet.views;
  }

  view(name: string): NodeView | undefined {
    return this.#byName.get(name);
  }

  snapshot(): RoutingSnapshot {
    return {
      nodes: this.#fleet.views,
      now: this.#now(),
      inFlight: () => 0,
      usage: () => IDLE,
      connectionLimit: this.#fleet.connectionLimit,
    };
  }
}

function byName(views: readonly NodeView[]): ReadonlyMap<string, NodeView> {
  return new Map(views.map((v) => [v.spec.name, v]));
}
