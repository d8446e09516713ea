// Pure: the fleet is every source's nodes, the `[[nodes]]` list first. A name one source already
// gave is not taken again from a later one: that node is left out, with the reason.

import type { NodeSpec } from '#src/config/index.ts';
import type { NodeSource } from './node-source.ts';

export interface LeftOut {
  readonly node: string;
  readonly source: string;
  readonly reason: string;
}

export function fleetNodes(sources: readonly NodeSource[]): { nodes: readonly NodeSpec[]; leftOut: readonly LeftOut[] } {
  const taken = new Map<string, string>();
  const nodes: NodeSpec[] = [];
  const leftOut: LeftOut[] = [];
  for (const source of sources) {
    for (const node of source.nodes()) {
      const owner = taken.get(node.name);
      if (owner !== undefined) {
        leftOut.push({
          node: node.name,
          source: source.name,
          reason: `the name is already taken by a node of source '${owner}'`,
        });
        continue;
      }
      taken.set(node.name, source.name);
      nodes.push(source.spec(node));
    }
  }
  return { nodes: Object.freeze(nodes), leftOut };
}
