// Pure: what the Fleet view's "last error" column says of a node besides its probes and listing —
// the last request that failed there (passive health's view: a 5xx, a refused connection, a timeout,
// a stream cut short) and its last ejection — and which of them all is the latest.

import type { ProxyEvents } from '#src/proxy/index.ts';

export interface NodeFailure {
  readonly text: string;
  /** Epoch ms, the gateway's clock. */
  readonly at: number;
}

const MAX_TEXT = 200;

/** Results of an attempt that are not the node's failure: success, the client leaving, the request's own fault. */
export const NOT_A_FAILURE: ReadonlySet<ProxyEvents['proxy:attempt']['result']> = new Set([
  'success',
  'client_abort',
  'context_overflow',
  'contradictory_refusal',
  'interim_response',
]);

/** A failed attempt's text, or undefined for an attempt that is no failure of the node. */
export function attemptFailureText(e: ProxyEvents['proxy:attempt']): string | undefined {
  if (NOT_A_FAILURE.has(e.result)) return undefined;
  const text = `request failed: ${e.result}${e.status === undefined ? '' : ` ${e.status}`}${e.error === undefined || e.error === '' ? '' : ` (${e.error})`}`;
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

export function ejectionText(untilMs: number, now: number): string {
  return `ejected by passive health for ${Math.max(0, Math.round((untilMs - now) / 1000))} s`;
}

/** The latest of the candidates (each may be absent); null when there is none. */
export function latestFailure(...candidates: readonly (NodeFailure | undefined)[]): NodeFailure | null {
  let best: NodeFailure | null = null;
  for (const c of candidates) if (c !== undefined && (best === null || c.at >= best.at)) best = c;
  return best;
}
