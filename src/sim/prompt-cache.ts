// llama-server's prompt cache as pure decisions: a slot keeps the last prompt it processed; a new
// prompt reuses the part it shares with it (the common prefix), so only the rest is processed and
// the first token comes sooner; a new request goes to the free slot whose cached prompt it shares
// the most with (llama-server's slot selection by prompt similarity).

/** Characters `a` and `b` share from their start. */
export function commonPrefixLength(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Tokens of a `promptTokens` prompt found in the slot's cache: the shared share of its text. */
export function cachedPromptTokens(cached: string | undefined, prompt: string | undefined, promptTokens: number): number {
  if (cached === undefined || prompt === undefined || prompt.length === 0) return 0;
  return Math.floor((promptTokens * commonPrefixLength(cached, prompt)) / prompt.length);
}

/** Time to the first token: `ttftMs` for a cold prompt, `hitTtftMs` for a fully cached one, linear between. */
export function promptTtftMs(ttftMs: number, hitTtftMs: number, cachedTokens: number, promptTokens: number): number {
  if (promptTokens <= 0 || cachedTokens <= 0) return ttftMs;
  return ttftMs - ((ttftMs - hitTtftMs) * Math.min(cachedTokens, promptTokens)) / promptTokens;
}

/** What a slot holds: its cached prompt, and its last task's id (task ids grow, so a lower one was used less recently). */
export interface CachedSlot {
  readonly promptText: string | undefined;
  readonly taskId: number | undefined;
}

/**
 * The free slot whose cached prompt shares the longest prefix with `prompt`; on ties (a prompt
 * like none cached) the least recently used one, a never-used slot first, so another session's
 * cache is the last thing overwritten.
 */
export function mostSimilarSlot(
  free: readonly number[],
  slotAt: (slot: number) => CachedSlot | undefined,
  prompt: string,
): number {
  let best = free[0] ?? 0;
  let bestShared = -1;
  let bestUsed = Number.POSITIVE_INFINITY;
  for (const slot of free) {
    const held = slotAt(slot);
    const shared = held?.promptText === undefined ? 0 : commonPrefixLength(held.promptText, prompt);
    const used = held?.taskId ?? -1;
    if (shared > bestShared || (shared === bestShared && used < bestUsed)) {
      best = slot;
      bestShared = shared;
      bestUsed = used;
    }
  }
  return best;
}
