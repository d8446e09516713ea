// A fleet: every node of a FleetSpec started on loopback, closed together.

import type { Clock } from '#src/core/clock.ts';
import { startSimNode, type SimNode } from '#src/sim/sim-node.ts';
import type { FleetSpec } from '#src/sim/spec.ts';

export interface FleetOptions {
  readonly clock?: Clock;
  readonly host?: string;
}

export interface Fleet {
  readonly nodes: readonly SimNode[];
  close(): Promise<void>;
}

/** Starts the nodes in order; if one fails, the ones already started are closed. */
export async function startFleet(spec: FleetSpec, options: FleetOptions = {}): Promise<Fleet> {
  const nodes: SimNode[] = [];
  try {
    for (const [index, nodeSpec] of spec.nodes.entries()) {
      nodes.push(await startSimNode(nodeSpec, { ...options, index }));
    }
  } catch (error) {
    await Promise.all(nodes.map((node) => node.close()));
    throw error;
  }
  return {
    nodes,
    close: async () => {
      await Promise.all(nodes.map((node) => node.close()));
    },
  };
}
