// Contexts a node stated itself when refusing a prompt (llama.cpp's n_ctx, vLLM's "maximum context
// length is N"). They stand in for figures its polls do not give (e.g. a kind with no /props), for a
// while: a poll that gives a figure wins, and an old one is dropped so a server restarted with a
// larger context is not refused for ever.

import type { ModelContext, NodeCapacity } from './node-capacity.ts';

export type LearnedContexts = Readonly<Record<string, { readonly nCtx: number; readonly atMs: number }>>;

/** How long a context a node stated in a refusal stands in for a figure its polls do not give. */
export const LEARNED_CONTEXT_TTL_MS = 10 * 60_000;

/** Pure: a poll's capacity plus the still-fresh learned contexts of models the poll gave no figure for. */
export function withLearnedContexts(
  capacity: NodeCapacity,
  learned: LearnedContexts,
  now: number,
): { capacity: NodeCapacity; learned: LearnedContexts } {
  const keep: Record<string, { nCtx: number; atMs: number }> = {};
  const extra: Record<string, ModelContext> = {};
  for (const [model, entry] of Object.entries(learned)) {
    if (capacity.models[model] !== undefined || now - entry.atMs >= LEARNED_CONTEXT_TTL_MS) continue;
    keep[model] = entry;
    extra[model] = { nCtx: entry.nCtx, slots: undefined };
  }
  if (Object.keys(extra).length === 0) return { capacity, learned: keep };
  return { capacity: { ...capacity, models: { ...capacity.models, ...extra } }, learned: keep };
}
