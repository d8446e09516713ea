// Cache-aware: send a prompt to the node whose (estimated) prefix cache already holds the longest
// part of it, unless the load between candidates is out of balance — then the least loaded wins.
// After SGLang's model gateway: a match ratio above `threshold` routes by cache; an imbalance
// (max - min in flight above `balanceAbs` and max above `balanceRel` x min) routes by load. Either
// way the prompt is recorded under the chosen node in the shared PrefixTree (bounded memory).

import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { RouteRequest } from '../route-request.ts';
import { inFlights, pickLowest } from './least-in-flight.ts';
import { PrefixTree } from './prefix-tree.ts';
import type { CacheAwareSettings, PolicyChoice, PolicyContext, SelectionPolicy } from './selection-policy.ts';
import type { RequestFeature } from './selection-policy.ts';

export type { CacheAwareSettings };

interface Decided {
  readonly choice: PolicyChoice;
  /** The prompt text considered, and how much of it the chosen node holds. */
  readonly text: string;
  readonly matched: number;
}

export interface PrefixHitFigures {
  /** Prompt characters the chosen nodes were estimated to hold already, and all prompt characters routed. */
  readonly matchedChars: number;
  readonly promptChars: number;
}

export interface CacheAwarePolicy extends SelectionPolicy {
  explain: NonNullable<SelectionPolicy['explain']>;
  /** The estimated prefix-hit rate's parts, since start. */
  hits(): PrefixHitFigures;
}

/** The request features it reads: the prompt's start it matches. */
export const CACHE_AWARE_READS: readonly RequestFeature[] = Object.freeze(['promptPrefix']);

export function cacheAware(context: PolicyContext): CacheAwarePolicy {
  const settings = context.cacheAware();
  const tree = new PrefixTree(settings.maxTreeChars);
  let matchedChars = 0;
  let promptChars = 0;
  let turn = 0;
  return {
    name: 'cache-aware',
    reads: CACHE_AWARE_READS,
    hits: () => ({ matchedChars, promptChars }),
    choose(req, candidates, snapshot) {
      const decided = decide(req, candidates, snapshot);
      if (decided === undefined) return undefined;
      if (decided.text !== '') {
        matchedChars += decided.matched;
        promptChars += decided.text.length;
        tree.insert(decided.text, decided.choice.node.spec.name);
      }
      return decided.choice;
    },
    explain: (req, candidates, snapshot) => decide(req, candidates, snapshot)?.choice,
  };

  function decide(req: RouteRequest, candidates: readonly NodeView[], snapshot: RoutingSnapshot): Decided | undefined {
    if (candidates.length === 0) return undefined;
    const { threshold, balanceAbs, balanceRel, maxPromptChars } = context.cacheAware();
    const loads = inFlights(candidates, snapshot);
    const text = (req.promptPrefix ?? '').slice(0, maxPromptChars);
    const matches = text === '' ? new Map<string, number>() : tree.match(text);
    let best = -1;
    let bestMatch = 0;
    for (let i = 0; i < candidates.length; i += 1) {
      const m = matches.get(candidates[i]?.spec.name ?? '') ?? 0;
      if (m > bestMatch || (m === bestMatch && best >= 0 && m > 0 && (loads[i] ?? 0) < (loads[best] ?? 0))) {
        bestMatch = m;
        best = i;
      }
    }
    const ratio = text.length === 0 ? 0 : bestMatch / text.length;
    const max = Math.max(...loads);
    const min = Math.min(...loads);
    const imbalanced = max - min > balanceAbs && max > balanceRel * min;
    // Lower is better: in flight minus the share of the prompt the node holds.
    const scores = candidates.map(
      (n, i) => (loads[i] ?? 0) - (text.length === 0 ? 0 : (matches.get(n.spec.name) ?? 0) / text.length),
    );
    let index: number;
    let reason: string;
    const percent = Math.round(ratio * 100);
    if (!imbalanced && best >= 0 && ratio > threshold) {
      index = best;
      reason = `prefix match ${percent}%`;
    } else {
      const picked = pickLowest(candidates, loads, turn);
      turn = (turn + 1) % Number.MAX_SAFE_INTEGER;
      index = picked === undefined ? 0 : candidates.indexOf(picked.node);
      reason = imbalanced
        ? `load imbalance (${min} to ${max} in flight), fewest in flight`
        : `best prefix match ${percent}%, fewest in flight`;
    }
    const node = candidates[index];
    if (node === undefined) return undefined;
    return { choice: { node, reason, scores }, text, matched: matches.get(node.spec.name) ?? 0 };
  }
}
