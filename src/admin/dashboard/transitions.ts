// Pure: the Events view's entries. Each registry event that changes what an operator sees (health,
// listing state, wake, ejection, readmission, membership), each config reload, and with [mesh] each
// remote site's freshness and reachability transition and each record rejection (once per peer and
// reason, as logged) becomes one line; a probe or an unchanged listing is not a transition.

import type { RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { SiteEvents } from './site-events.ts';

export type TransitionKind =
  | 'health'
  | 'discovery'
  | 'wake'
  | 'ejection'
  | 'readmission'
  | 'membership'
  | 'reload'
  | 'freshness'
  | 'reachability'
  | 'rejection';

export interface Transition {
  /** Increasing number: the page keeps the newest first and drops duplicates on reconnect. */
  readonly seq: number;
  readonly at: number;
  /** Empty for gateway-wide entries (a reload) and remote sites' entries. */
  readonly node: string;
  /** The remote site a [mesh] entry is about (absent for nodes and for a record naming no site). */
  readonly site?: string;
  readonly kind: TransitionKind;
  readonly text: string;
}

export type TransitionDraft = Omit<Transition, 'seq' | 'at'>;

type Events = RegistryEvents;

export function healthTransition(e: Events['node:health-changed']): TransitionDraft | undefined {
  if (e.from.status === e.to.status) return undefined;
  const error = e.to.lastError === undefined ? '' : ` (${e.to.lastError})`;
  return { node: e.node, kind: 'health', text: `health ${e.from.status} → ${e.to.status}${error}` };
}

/**
 * Runs for every listing of every node (1,000 nodes: 500 a second). The registry holds an unchanged
 * listing once (the same frozen array from poll to poll), so the common case is one identity check
 * and builds nothing; only a listing that did change is compared id by id.
 */
export function discoveryTransition(e: Events['node:discovery']): TransitionDraft | undefined {
  const samePhase = e.from.phase === e.to.phase;
  if (samePhase && e.from.models === e.to.models) return undefined;
  const { added, removed } = idChanges(e.from.models, e.to.models);
  if (samePhase && added === 0 && removed === 0) return undefined;
  const parts = [`listing ${e.from.phase} → ${e.to.phase}`];
  if (added > 0) parts.push(`+${added} model${added === 1 ? '' : 's'}`);
  if (removed > 0) parts.push(`−${removed} model${removed === 1 ? '' : 's'}`);
  // The error explains the whole line: after it, in parentheses, not as one more item of the list.
  const error = e.to.lastError !== undefined && e.to.lastError !== e.from.lastError ? ` (${e.to.lastError})` : '';
  return { node: e.node, kind: 'discovery', text: `${parts.join(', ')}${error}` };
}

/** How many ids the listing gained and lost (duplicates counted once, as sets). */
function idChanges(
  from: readonly { readonly id: string }[],
  to: readonly { readonly id: string }[],
): { added: number; removed: number } {
  const before = new Set<string>();
  for (const m of from) before.add(m.id);
  const after = new Set<string>();
  let added = 0;
  for (const m of to) {
    if (after.has(m.id)) continue;
    after.add(m.id);
    if (!before.has(m.id)) added++;
  }
  let removed = 0;
  for (const id of before) if (!after.has(id)) removed++;
  return { added, removed };
}

export function wakeTransition(e: Events['node:wake']): TransitionDraft | undefined {
  if (e.result === 'in_window') return undefined;
  const error = e.error === undefined ? '' : ` (${e.error})`;
  return { node: e.node, kind: 'wake', text: `wake ${e.result} (${e.reason})${error}` };
}

export function ejectionTransition(e: Events['node:ejected']): TransitionDraft {
  return {
    node: e.node,
    kind: 'ejection',
    text: `ejected after repeated request failures until ${new Date(e.untilMs).toISOString()}`,
  };
}

export function reloadTransition(outcome: {
  readonly ok: boolean;
  readonly problems?: readonly { readonly path: string; readonly message: string }[];
}): TransitionDraft {
  if (outcome.ok) return { node: '', kind: 'reload', text: 'config reloaded' };
  const first = outcome.problems?.[0];
  return {
    node: '',
    kind: 'reload',
    text: `config reload rejected${first === undefined ? '' : `: ${first.path}: ${first.message}`}`,
  };
}

export function freshnessTransition(e: SiteEvents['mesh:site-freshness']): TransitionDraft {
  const text = e.fresh
    ? 'stale → fresh (a newer record arrived)'
    : 'fresh → stale (no newer record within [mesh] freshness: its models are not routed to)';
  return { node: '', site: e.site, kind: 'freshness', text };
}

export function reachabilityTransition(e: ProxyEvents['mesh:site-reachability']): TransitionDraft {
  const text = e.reachable
    ? 'reachable again (a forward got an answer)'
    : `unreachable${e.detail === undefined ? '' : ` (${e.detail})`}: forwards skip it while it backs off`;
  return { node: '', site: e.site, kind: 'reachability', text };
}

/**
 * A rejection is a line when the log writes one (once per (peer, reason), rate-limited per reason),
 * and only when a pinned site or an admitted peer wrote the message: what anyone else sends (author
 * keys are free) only counts in the metrics, so it cannot push real transitions out of the log.
 */
export function rejectionTransition(e: SiteEvents['mesh:record-rejected']): TransitionDraft | undefined {
  if (!e.log || !e.knownAuthor) return undefined;
  const text = `record from peer ${e.peer} rejected: ${e.reason} (${e.detail})`;
  return e.site === undefined ? { node: '', kind: 'rejection', text } : { node: '', site: e.site, kind: 'rejection', text };
}

/** The newest `limit` transitions, oldest first; a pure append. */
export function appendBounded(log: readonly Transition[], entry: Transition, limit: number): Transition[] {
  const next = [...log, entry];
  return next.length > limit ? next.slice(next.length - limit) : next;
}
