// What the hosts of the request plane give the owner's parts (gateway/parts.ts): their figures (the main thread's one
// plane with `workers = 1`, else every worker's), summed for /admin/runtime and /metrics, and a
// reload they must follow. Empty until the plane is hosted.

import type { PlaneFigures } from '#src/plane/index.ts';
import type { PoolFigures } from '#src/proxy/index.ts';
import { sumPoolFigures } from './figures.ts';

export interface PlaneHosts {
  readonly figures: () => readonly PlaneFigures[];
  /** Resolves once every host follows the reloaded config (the workers confirmed it). */
  readonly reloaded: () => Promise<void> | void;
}

export class PlaneHostFigures {
  #hosts: PlaneHosts = { figures: () => [], reloaded: () => {} };

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

  /** One feature's figures, of every host that reported some (the feature sums them: gateway/features.ts). */
  featureFigures(name: string): readonly unknown[] {
    return this.#hosts.figures().flatMap((f) => (name in f.features ? [f.features[name]] : []));
  }

  /** Answer bytes held in memory, over every host. */
  heldBytes(): number {
    return this.#hosts.figures().reduce((sum, f) => sum + f.heldBytes, 0);
  }
}
