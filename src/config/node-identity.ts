// The one rule for "is this the same node?" across a reload. Nodes are matched by name, the
// identity that logs, metrics and the admin API use; what changed under that name then decides
// how much of the node's learned state survives. Every component acts on this verdict (through
// `ConfigChange`) instead of comparing specs by its own rule.

import type { NodeSpec } from './types.ts';

/**
 * - `kept`: same server, same listing: health, discovery, capacity and timers all carry on; only
 *   fields that change neither (group, kv, wake settings…) differ.
 * - `relisted`: same server (its health and learned state carry on), but what its listing says or
 *   what the gateway takes of it may differ (api key, kind, allowed models): list it afresh.
 * - `replaced`: another server under the same name (its URL changed): every state starts fresh.
 */
export type NodeContinuity = 'kept' | 'relisted' | 'replaced';

export function nodeContinuity(old: NodeSpec, next: NodeSpec): NodeContinuity {
  if (old.url !== next.url) return 'replaced';
  if (old.apiKey !== next.apiKey || old.kind !== next.kind || !isSameAllowList(old.allowedModels, next.allowedModels)) {
    return 'relisted';
  }
  return 'kept';
}

/** Order matters: the patterns are the operator's list as written. */
export function isSameAllowList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((pattern, i) => pattern === b[i]);
}
