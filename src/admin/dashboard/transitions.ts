// Pure: the Events view's entries. Each registry event that changes what an operator sees (health,
// listing state, wake, ejection, readmission, membership) and each config reload becomes one line;
// a probe or an unchanged listing is not a transition and is skipped.

import type { RegistryEvents } from '#src/nodes/index.ts';

export type TransitionKind = 'health' | 'discovery' | 'wake' | 'ejection' | 'readmission' | 'membership' | 'reload';

export interface Transition {
  /** Increasing number: the page keeps the newest first and drops duplicates on reconnect. */
  readonly seq: number;
  readonly at: number;
  /** Empty for gateway-wide entries (a reload). */
  readonly node: string;
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

export function discoveryTransition(e: Events['node:discovery']): TransitionDraft | undefined {
  const before = new Set(e.from.models.map((m) => m.id));
  const after = new Set(e.to.models.map((m) => m.id));
  const added = [...after].filter((id) => !before.has(id)).length;
  const removed = [...before].filter((id) => !after.has(id)).length;
  if (e.from.phase === e.to.phase && added === 0 && removed === 0) return undefined;
  const parts = [`listing ${e.from.phase} → ${e.to.phase}`];
  if (added > 0) parts.push(`+${added} model${added === 1 ? '' : 's'}`);
  if (removed > 0) parts.push(`−${removed} model${removed === 1 ? '' : 's'}`);
  if (e.to.lastError !== undefined && e.to.lastError !== e.from.lastError) parts.push(`(${e.to.lastError})`);
  return { node: e.node, kind: 'discovery', text: parts.join(', ') };
}

export function wakeTransition(e: Events['node:wake']): TransitionDraft | undefined {
  if (e.result === 'in_window') return undefined;
  const error = e.error === undefined ? '' : ` (${e.error})`;
  return { node: e.node, kind: 'wake', text: `wake ${e.result} (${e.reason})${error}` };
}

export function ejectionTransition(e: Events['node:ejected']): TransitionDraft {
  return { node: e.node, kind: 'ejection', text: `ejected after repeated request failures until ${new Date(e.untilMs).toISOString()}` };
}

export function reloadTransition(outcome: { readonly ok: boolean; readonly problems?: readonly { readonly path: string; readonly message: string }[] }): TransitionDraft {
  if (outcome.ok) return { node: '', kind: 'reload', text: 'config reloaded' };
  const first = outcome.problems?.[0];
  return { node: '', kind: 'reload', text: `config reload rejected${first === undefined ? '' : `: ${first.path}: ${first.message}`}` };
}

/** The newest `limit` transitions, oldest first; a pure append. */
export function appendBounded(log: readonly Transition[], entry: Transition, limit: number): Transition[] {
  const next = [...log, entry];
  return next.length > limit ? next.slice(next.length - limit) : next;
}
