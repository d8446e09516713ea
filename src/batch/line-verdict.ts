// What a line's answer means for the line (pure): kept (a 2xx to the output file, any other answer
// to the error file), or sent again later because no node answered it — the gateway's own refusal
// to run it now (429 from a full queue or a tenant's per-minute limit that says retry, 503 with no
// node free or awake), or no answer at all (the gateway stopping). A 429 that says not to retry
// (`x-should-retry: false`: a tenant's daily budget spent, a request larger than its limit) is kept
// as the line's error answer.

/** How long a line waits before it is sent again when its answer says no time. */
export const RETRY_MS = 1_000;
/** The longest wait taken from an answer's Retry-After (a longer one still waits this long, then asks again). */
export const MAX_RETRY_MS = 60_000;

export type LineVerdict = { readonly kind: 'keep'; readonly ok: boolean } | { readonly kind: 'again'; readonly afterMs: number };

export function lineVerdict(status: number, headers: Readonly<Record<string, string | string[] | undefined>>): LineVerdict {
  if (status >= 200 && status < 300) return { kind: 'keep', ok: true };
  const retry = status === 503 || (status === 429 && headers['x-should-retry'] !== 'false');
  if (!retry) return { kind: 'keep', ok: false };
  return { kind: 'again', afterMs: retryAfterMs(headers) };
}

/** An answer that never came: sent again. */
export const NO_ANSWER: LineVerdict = Object.freeze({ kind: 'again', afterMs: RETRY_MS });

function retryAfterMs(headers: Readonly<Record<string, string | string[] | undefined>>): number {
  const ms = Number(headers['retry-after-ms']);
  const s = Number(headers['retry-after']);
  const wait = Number.isFinite(ms) && ms >= 0 ? ms : Number.isFinite(s) && s >= 0 ? s * 1000 : RETRY_MS;
  return Math.min(MAX_RETRY_MS, Math.max(100, wait));
}
