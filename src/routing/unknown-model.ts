// Pure: is a model unknown to the whole fleet (404 model_not_found) or only unavailable right now
// (503, retry later)? A model is unknown only when every node's listing can be trusted to say
// what it does not serve — each listing is current (`known` or `known_empty`: no node untried,
// degraded or expired) — and neither any node nor any remote site lists the model (a fresh site,
// or a stale one still remembered: routing/remote/remote-site.ts, REMEMBERED_MS). Any doubt
// keeps the 503: a client told 404 does not retry, so a false 404 would turn a hiccup into an error.

import type { DiscoveryPhase } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { closestNames } from './closest-names.ts';

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
}

export function judgeModel(input: ModelVerdictInput): ModelVerdict {
  const { nodes, model } = input;
  if (input.remoteModels?.has(model) === true) return { kind: 'served' };
  if (nodes.some((n) => n.modelsById.has(model))) return { kind: 'served' };
  const untrusted = nodes.filter((n) => !CURRENT.has(n.discovery.phase)).map((n) => n.spec.name);
  // No node at all is a configuration in progress, not evidence that the model does not exist.
  if (untrusted.length > 0 || nodes.length === 0) return { kind: 'unsure', untrusted };
  const served = [...nodes.flatMap((n) => n.discovery.models.map((m) => m.id)), ...(input.remoteModels ?? [])];
  return { kind: 'unknown', closest: closestNames(input.requested, served, MAX_SUGGESTIONS) };
}
