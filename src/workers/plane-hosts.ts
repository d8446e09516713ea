// What the hosts of the request plane give the owner's parts (gateway/parts.ts): their figures (the main thread's one
// plane with `workers = 1`, else every worker's), summed for /admin/runtime and /metrics, and a
// reload they must follow. Empty until the plane is hosted.

import type { SpanFigures } from '#src/core/tracing.ts';
import type { PlaneFigures } from '#src/plane/index.ts';
import type { PoolFigures } from '#src/proxy/index.ts';
import { sumPoolFigures } from './figures.ts';

export interface PlaneHosts {
  readonly figures: () => readonly PlaneFigures[];
  /** Resolves once every host follows the reloaded config (the workers confirmed it). */
  readonly reloaded: () => Promise<void> | void;
}

export class PlaneHostFigures {
  readonly #withSites: () => boolean;
  #hosts: PlaneHosts = { figures: () => [], reloaded: () => {} };

  /** `withSites`: the gateway is a site of a mesh (its hosts hold pools to the other sites). */
  constructor(withSites: () => boolean) {
    this.#withSites = withSites;
  }

  attach(hosts: PlaneHosts): void {
    this.#hosts = hosts;
  }

  /** A reload succeeded: every host follows it; resolves once they do. */
  async reloaded(): Promise<void> {
    await this.#hosts.reloaded();
  }

  /** Upstream connections per node, over every host. */
  upstream(): Record<string, PoolFigures> {
    return sumPoolFigures(this.#hosts.figures().map((f) => f.upstream));
  }

  /** Connections per remote site, over every host; undefined without [mesh]. */
  upstreamSites(): Record<string, PoolFigures> | undefined {
    return this.#withSites() ? sumPoolFigures(this.#hosts.figures().map((f) => f.upstreamSites)) : undefined;
  }

  /** Trace spans exported, dropped and failed, over every host; undefined = no host traces. */
  spans(): SpanFigures | undefined {
    let sum: SpanFigures | undefined;
    for (const { spans } of this.#hosts.figures()) {
      if (spans === undefined) continue;
      sum = {
        exported: (sum?.exported ?? 0) + spans.exported,
        dropped: (sum?.dropped ?? 0) + spans.dropped,
        failed: (sum?.failed ?? 0) + spans.failed,
      };
    }
    return sum;
  }

  /** Answer bytes held in memory, over every host. */
  heldBytes(): number {
    return this.#hosts.figures().reduce((sum, f) => sum + f.heldBytes, 0);
  }
}
