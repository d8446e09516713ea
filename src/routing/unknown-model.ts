// Pure: is a model unknown to the whole fleet (404 model_not_found) or only unavailable right now
// (503, retry later)? A node's last known listing is what it would serve, whatever its health or
// the listing's age (a dead node, an expired or degraded listing): a name that no node's last
// listing takes, nor any remote site's (a fresh site, or a stale one still remembered:
// routing/remote/remote-site.ts, REMEMBERED_MS), is unknown — a dead node that never listed the
// name cannot make it a "try again". The one doubt is a node that has never listed its models
// (discovery still `untried`: since it was added, no listing has come and fewer than fail_threshold
// fetches have failed in a row), which might serve anything: while one such node's allow-list
// admits the name, the answer is 503. That doubt is bounded by discovery itself: the node's first
// listing settles it, and so does its listing expiring (docs/config.md, "Unknown and unavailable
// models"). A name outside the client's scope (a tenant's `models`) is unknown to that client
// whatever the fleet says.

import type { DiscoveryPhase } from '#src/discovery/index.ts';
import { isAllowedModel } from '#src/discovery/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { closestNames } from './closest-names.ts';
import { anyNodeResolves } from './route-request.ts';
import { serverKind } from '#src/kinds/index.ts';

export type ModelVerdict =
  | {
      readonly kind: 'unknown';
      /** Served models nearest to the requested name, nearest first. */ readonly closest: readonly string[];
    }
  | { readonly kind: 'served' }
  | {
      readonly kind: 'unsure';
      /** The nodes that have never listed their models and might serve the name. */ readonly unlisted: readonly string[];
    };

/** The one listing phase that leaves a name in doubt: the node has never listed its models (and has not given up). */
const NEVER_LISTED: DiscoveryPhase = 'untried';

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

/**
 * A name answered as unknown whatever the fleet says (a gate's verdict: outside a tenant's scope):
 * no doubt, no node count, no dead state is told; only the visible names nearest to it.
 */
export function unknownVerdict(input: Omit<ModelVerdictInput, 'model'>): ModelVerdict & { readonly kind: 'unknown' } {
  return { kind: 'unknown', closest: suggestions(input.requested, input.nodes, input.remoteModels, input.visible) };
}

export function judgeModel(input: ModelVerdictInput): ModelVerdict {
  const { nodes, model } = input;
  const unknown = (): ModelVerdict => unknownVerdict(input);
  if (input.remoteModels?.has(model) === true) return { kind: 'served' };
  // Served = some node's last listing takes the name as its kind of server does (route-request.ts, servedModelName),
  // as routing reads it — a dead node's or an expired listing's too: known, only unavailable now.
  if (anyNodeResolves(model, nodes)) return { kind: 'served' };
  const unlisted = nodes
    .filter((n) => n.discovery.phase === NEVER_LISTED && isAllowedModel(n.spec.allowedModels, model))
    .map((n) => n.spec.name);
  // No node at all is a configuration in progress, not evidence that the model does not exist.
  if (unlisted.length > 0 || nodes.length === 0) return { kind: 'unsure', unlisted };
  return unknown();
}

/**
 * The names nearest to `requested` that some node takes: its ids, a remote site's, and the aliases
 * a node's kind resolves (a llama-server's) — ranked all together, resolved only for the few kept.
 */
function suggestions(
  requested: string,
  nodes: ModelVerdictInput['nodes'],
  remote: ReadonlySet<string> | undefined,
  visible: ((name: string) => boolean) | undefined,
): string[] {
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
    taken.has(name) ||
    (aliasOwners.get(name) ?? []).some(
      (node) => serverKind(node.spec.kind).resolveModelName(name, node.modelsById) !== undefined,
    );
  const ranked = closestNames(requested, [...taken, ...aliasOwners.keys()], taken.size + aliasOwners.size);
  const kept: string[] = [];
  for (const name of ranked) {
    if (kept.length === MAX_SUGGESTIONS) break;
    if (takes(name) && (visible === undefined || visible(name))) kept.push(name);
  }
  return kept;
}
