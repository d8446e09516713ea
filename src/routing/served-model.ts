// Pure: which listed model a request's name stands for, fleet-wide. Each node resolves the name the
// way its kind of server does (ServerKind.resolveModelName: Ollama's implicit `:latest`, a
// llama-server's aliases, …); routing then runs on that id, so every node it picks lists it and is
// sent the name it listed. Unknown-model answers and their suggestions read the same resolution.

import type { NodeKind } from '#src/config/types.ts';
import { serverKind, type ListedNames } from '#src/kinds/index.ts';

/** What resolution reads of a node (NodeView fits). */
export interface NamedNode {
  readonly spec: { readonly kind: NodeKind };
  readonly modelsById: ListedNames;
}

/**
 * The id routing uses for `requested`: the name itself when some node lists it as it is (an exact
 * id never loses to another node's alias); else the id the most nodes resolve it to (ties: the
 * first in sort order, so every gateway and worker picks the same); else `requested` unchanged —
 * nothing serves it, and the unknown-model verdict says so. `offering`: the nodes that may list
 * `requested` (nodes/model-offers.ts; any superset of those listing it), read first so that the
 * common case, a listed id, does not scan the fleet.
 */
export function servedModelName(requested: string, nodes: readonly NamedNode[], offering: readonly NamedNode[] = nodes): string {
  // A plain loop (no closure): this runs on every request.
  for (let i = 0; i < offering.length; i += 1) if ((offering[i] as NamedNode).modelsById.has(requested)) return requested;
  const votes = new Map<string, number>();
  for (const node of nodes) {
    const id = serverKind(node.spec.kind).resolveModelName(requested, node.modelsById);
    if (id !== undefined) votes.set(id, (votes.get(id) ?? 0) + 1);
  }
  let best: { id: string; count: number } | undefined;
  for (const [id, count] of votes) {
    if (best === undefined || count > best.count || (count === best.count && id < best.id)) best = { id, count };
  }
  return best?.id ?? requested;
}

/** Whether any node would take `requested` under its kind's rules. */
export function anyNodeResolves(requested: string, nodes: readonly NamedNode[]): boolean {
  return nodes.some((node) => serverKind(node.spec.kind).resolveModelName(requested, node.modelsById) !== undefined);
}
