// A node's load as the load loop last read it from the node's own metrics, and the pure rule for
// when routing may trust it. Missing or stale figures degrade to the gateway's own in-flight count.

import type { LoadFigures } from '#src/kinds/index.ts';

/** What one scrape found: the figures, or why there are none. */
export type LoadScrape = { readonly ok: true; readonly figures: LoadFigures } | { readonly ok: false; readonly error: string };

/** A scrape as the registry keeps it. */
export type LoadReading = LoadScrape & {
  /** When it arrived (epoch ms). */
  readonly atMs: number;
  /** The gateway's in-flight requests to the node when it arrived: those sent since are not in the figures yet. */
  readonly inFlightAtScrape: number;
};

/** Figures routing may use, or why it falls back to the in-flight count. */
export type LoadVerdict =
  | { readonly usable: true; readonly figures: LoadFigures; readonly inFlightAtScrape: number }
  | { readonly usable: false; readonly why: string };

export function judgeLoad(reading: LoadReading | undefined, hasMetrics: boolean, now: number, staleAfterMs: number): LoadVerdict {
  if (!hasMetrics) return { usable: false, why: 'kind exports no load metrics' };
  if (reading === undefined) return { usable: false, why: 'no load metrics read yet' };
  const ageMs = Math.max(0, now - reading.atMs);
  if (!reading.ok) return { usable: false, why: `load metrics unreadable: ${reading.error}` };
  if (ageMs > staleAfterMs) return { usable: false, why: `load metrics stale (${Math.round(ageMs / 1000)}s old)` };
  return { usable: true, figures: reading.figures, inFlightAtScrape: reading.inFlightAtScrape };
}
