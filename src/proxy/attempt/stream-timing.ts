// Token timing of a stream, measured as it passes: when the first generated token reached the
// client, and the mean gap between tokens after it. The reader already counts the generated-text
// events (seen-tokens.ts); a chunk that raised the count is a token arriving, timed with one clock
// read. A chunk carrying several tokens spreads its gap over them. Nothing is kept per token.
// The same figures show the node's speed (decodeSample), which the registry learns.

import type { DecodeObserved } from './answer-usage.ts';

export interface TokenTimes {
  /** From the request's arrival to the first chunk with a generated token; undefined = none came. */
  readonly firstTokenMs: number | undefined;
  /** The mean gap between tokens after the first chunk's; undefined = fewer than two chunks carried any. */
  readonly interTokenMs: number | undefined;
}

export class StreamTiming {
  #firstAt: number | undefined;
  #lastAt = 0;
  #firstCount = 0;
  #count = 0;

  /** Called after a chunk passed, with the tokens seen so far; reads the clock only when it grew. */
  passed(seen: number, now: () => number): void {
    if (seen <= this.#count) return;
    const at = now();
    if (this.#firstAt === undefined) {
      this.#firstAt = at;
      this.#firstCount = seen;
    }
    this.#lastAt = at;
    this.#count = seen;
  }

  /**
   * What the stream showed of the node's speed (capacity/learned-figures.ts learns from it): the tokens
   * after its first token-carrying chunk over the time to the last one — scaled up to the node's
   * own count when it stated more (chunks carrying several tokens) — and the time from sending the
   * request (`sentMs`, monotonic) to the first token. undefined = fewer than two chunks carried any.
   */
  decodeSample(sentMs: number, completionTokens: number | undefined): DecodeObserved | undefined {
    const later = this.#count - this.#firstCount;
    if (this.#firstAt === undefined || later <= 0) return undefined;
    const scale = completionTokens !== undefined && completionTokens > this.#count ? completionTokens / this.#count : 1;
    return { tokens: later * scale, decodeMs: this.#lastAt - this.#firstAt, firstTokenMs: Math.max(0, this.#firstAt - sentMs) };
  }

  times(startedMs: number): TokenTimes {
    return tokenTimes({
      startedMs,
      firstAt: this.#firstAt,
      lastAt: this.#lastAt,
      firstCount: this.#firstCount,
      count: this.#count,
    });
  }
}

/** Pure: the figures from what was kept. */
export function tokenTimes(kept: {
  startedMs: number;
  firstAt: number | undefined;
  lastAt: number;
  firstCount: number;
  count: number;
}): TokenTimes {
  if (kept.firstAt === undefined) return { firstTokenMs: undefined, interTokenMs: undefined };
  const later = kept.count - kept.firstCount;
  return {
    firstTokenMs: Math.max(0, kept.firstAt - kept.startedMs),
    interTokenMs: later > 0 ? Math.max(0, kept.lastAt - kept.firstAt) / later : undefined,
  };
}
