// Stored discovery state is frozen once, when the registry writes it, and an unchanged listing
// keeps its previous (already frozen) array, so routing views stay valid across identical polls.

import type { DiscoveredModel, DiscoveryState } from '#src/discovery/index.ts';

/**
 * Stored state is frozen once, when it is written, so views can hand it out without copying on
 * every read and no reader can change it. A new listing is copied: the caller keeps its own array
 * (its models, when already frozen, are shared: nobody can change them).
 */
export function frozenDiscovery(state: DiscoveryState, prev: DiscoveryState | undefined): DiscoveryState {
  const models =
    prev !== undefined && (state.models === prev.models || sameListing(state.models, prev.models))
      ? prev.models
      : Object.freeze(state.models.map(frozenModel));
  return Object.freeze({ ...state, models });
}

/** A model already frozen with its aliases (as parse-model-list.ts makes them) is stored as it is: no second copy. */
function frozenModel(m: DiscoveredModel): DiscoveredModel {
  if (Object.isFrozen(m) && Object.isFrozen(m.aliases)) return m;
  return Object.freeze({ ...m, aliases: Object.isFrozen(m.aliases) ? m.aliases : Object.freeze([...m.aliases]) });
}

/** Whether two listings say the same (ids, load state, exit code, progress, context, aliases, in order). */
function sameListing(a: readonly DiscoveredModel[], b: readonly DiscoveredModel[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) return false;
    if (x.id !== y.id || x.loaded !== y.loaded || x.status !== y.status || x.contextTokens !== y.contextTokens || x.kv !== y.kv)
      return false;
    if (x.exitCode !== y.exitCode || x.progress !== y.progress) return false;
    if (x.aliases.length !== y.aliases.length) return false;
    // A plain loop: this runs for every model of every poll (no closure per model).
    for (let j = 0; j < x.aliases.length; j++) if (x.aliases[j] !== y.aliases[j]) return false;
  }
  return true;
}
