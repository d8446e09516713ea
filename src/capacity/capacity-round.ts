// Pure: which loaded models of a llama-server router are asked for `/props?model=` in one poll, and
// the figures that stand afterwards. A router may have hundreds of models loaded; asking each on
// every poll is one request per model per node per interval, so each poll asks at most a fixed
// number, taking turns in id order: every loaded model is asked within ceil(loaded / max) polls,
// and the others keep the figures they last gave.

import type { ModelContext } from './node-capacity.ts';

export interface RouterRound {
  /** The last id asked so far; the next poll starts after it (ids in sort order, wrapping). */
  readonly lastAsked: string | undefined;
  /** Figures per loaded model from the polls so far. */
  readonly figures: Readonly<Record<string, ModelContext>>;
}

export const FIRST_ROUND: RouterRound = Object.freeze({ lastAsked: undefined, figures: Object.freeze({}) });

/** Up to `max` of the loaded ids, in id order, starting after `lastAsked` and wrapping around. */
export function idsToAsk(loadedIds: readonly string[], lastAsked: string | undefined, max: number): string[] {
  const sorted = [...new Set(loadedIds)].sort(byCodeUnits);
  if (sorted.length <= max) return sorted;
  const next = lastAsked === undefined ? 0 : sorted.findIndex((id) => id > lastAsked);
  const start = next < 0 ? 0 : next;
  return [...sorted.slice(start), ...sorted.slice(0, start)].slice(0, Math.max(0, max));
}

/**
 * The round after one poll. `answers` holds the ids actually asked, in the order asked: a figure,
 * or undefined for a failed or unreadable answer (the id then has no figure, as before). Loaded ids
 * not asked keep their last figure; ids no longer loaded drop theirs.
 */
export function afterRound(
  round: RouterRound,
  loadedIds: readonly string[],
  answers: ReadonlyMap<string, ModelContext | undefined>,
): RouterRound {
  const figures: Record<string, ModelContext> = {};
  for (const id of loadedIds) {
    const figure = answers.has(id) ? answers.get(id) : round.figures[id];
    if (figure !== undefined) figures[id] = figure;
  }
  const asked = [...answers.keys()];
  return { lastAsked: asked.at(-1) ?? round.lastAsked, figures };
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
