// Pure: is a model unknown to the whole fleet (404 model_not_found) or only unavailable right now
// (503, retry later)? A model is unknown only when every node's listing can be trusted to say
// what it does not serve — each listing is current (`known` or `known_empty`: no node untried,
// degraded or expired) — and neither any node nor any remote site lists the model (a fresh site,
// or a stale one still remembered: routing/remote/remote-site.ts, REMEMBERED_MS). Any doubt
// keeps the 503: a client told 404 does not retry, so a false 404 would turn a hiccup into an error.

import type { DiscoveryPhase } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { closestNames } from './closest-names.ts';
import { anyNodeResolves } from './served-model.ts';
import { serverKind } from '#src/kinds/index.ts';

export type ModelVerdict =
  | { readonly kind: 'unknown'; /** Served models nearest to the requested name, nearest first. */ readonly closest: readonly string[] }
  | { readonly kind: 'served' }
  | { readonly kind: 'unsure'; /** The nodes whose listing cannot be trusted right now. */ readonly untrusted: readonly string[] };

/** Listing phases that say exactly which models a node serves now. */
const CURRENT: ReadonlySet<DiscoveryPhase> = new Set(['known', 'known_empty']);

/** How many served models a model_not_found answer names at most. */
export const MAX_SUGGESTIONS = 5;

export interface ModelVerdictInput {
  /** Every active node (routing's snapshot), whatever its group, health or load. */
  readonly nodes: readonly Pick<NodeView, 'spec' | 'discovery' | 'modelsById'>[];
  /** The model id the request resolved to. */
  readonly model: string;
  /** The name the client asked for (before aliases): what the suggestions are ranked against. */
  readonly requested: string;
  /**
   * Models remote sites list now or listed lately ([mesh]: knownRemoteModels): each is unavailable
   * when no one can serve it, never unknown. Sites stale beyond REMEMBERED_MS are left out by the caller.
   */
  readonly remoteModels?: ReadonlySet<string>;
  /**
   * The names the client may be told of (a tenant's model scope); absent = every name. A name
   * outside it is never suggested, so a 404 reveals nothing beyond the scope.
   */
  readonly visible?: ((name: string) => boolean) | undefined;
}

export function judgeModel(input: ModelVerdictInput): ModelVerdict {
  const { nodes, model } = input;
  if (input.remoteModels?.has(model) === true) return { kind: 'served' };
  // Served = some node takes the name as its kind of server does (served-model.ts), as routing reads it.
  if (anyNodeResolves(model, nodes)) return { kind: 'served' };
  const untrusted = nodes.filter((n) => !CURRENT.has(n.discovery.phase)).map((n) => n.spec.name);
  // No node at all is a configuration in progress, not evidence that the model does not exist.
  if (untrusted.length > 0 || nodes.length === 0) return { kind: 'unsure', untrusted };
  return { kind: 'unknown', closest: suggestions(input.requested, nodes, input.remoteModels, input.visible) };
}

/**
 * The names nearest to `requested` that some node takes: its ids, a remote site's, and the aliases
 * a node's kind resolves (a llama-server's) — ranked all together, resolved only for the few kept.
 */
function suggestions(requested: string, nodes: ModelVerdictInput['nodes'], remote: ReadonlySet<string> | undefined, visible: ((name: string) => boolean) | undefined): string[] {
  const taken = new Set<string>(remote);
  const aliasOwners = new Map<string, ModelVerdictInput['nodes'][number][]>();
  for (const node of nodes) {
    for (const model of node.discovery.models) {
      taken.add(model.id);
      for (const alias of model.aliases) {
        const owners = aliasOwners.get(alias);
        if (owners === undefined) aliasOwners.set(alias, [node]);
        else owners.push(node);
      }
    }
  }
  const takes = (name: string): boolean =>
    taken.has(name) || (aliasOwners.get(name) ?? []).some((node) => serverKind(node.spec.kind).resolveModelName(name, node.modelsById) !== undefined);
  const ranked = closestNames(requested, [...taken, ...aliasOwners.keys()], taken.size + aliasOwners.size);
  const kept: string[] = [];
  for (const name of ranked) {
    if (kept.length === MAX_SUGGESTIONS) break;
    if (takes(name) && (visible === undefined || visible(name))) kept.push(name);
  }
  return kept;
}
