// Pure: a tenant's rate windows and the admission verdict. Each per-minute limit is a bucket that
// refills continuously over a minute, as OpenAI's do: a limit of L holds at most L and gains L per
// 60 s, so a tenant that used everything may send one more request (or L/60 more tokens) every
// second. A bucket is stored as what is used of it (`used`, at `atMs`), draining at L per minute.
// The day's budget is the UTC day's prompt + completion tokens, reservations still open included.

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

export interface Meter {
  /** What is used of the bucket at `atMs` (may exceed the limit after an answer used more than reserved). */
  readonly used: number;
  readonly atMs: number;
}

export interface TenantLimits {
  readonly maxConcurrent: number | undefined;
  readonly requestsPerMinute: number | undefined;
  readonly tokensPerMinute: number | undefined;
  readonly tokensPerDay: number | undefined;
}

/** What is used of a bucket of `limit` per minute at `nowMs`. */
export function usedAt(meter: Meter, limit: number, nowMs: number): number {
  const drained = (Math.max(0, nowMs - meter.atMs) * limit) / MINUTE_MS;
  return Math.max(0, meter.used - drained);
}

/** The bucket after `amount` more (negative: given back) at `nowMs`. */
export function charged(meter: Meter, limit: number | undefined, amount: number, nowMs: number): Meter {
  const used = limit === undefined ? 0 : usedAt(meter, limit, nowMs);
  return { used: Math.max(0, used + amount), atMs: nowMs };
}

/** Milliseconds until a bucket with `used` has room for `amount` more (0 = now). */
export function msUntilRoom(used: number, limit: number, amount: number): number {
  const excess = used + amount - limit;
  return excess <= 0 ? 0 : Math.ceil((excess * MINUTE_MS) / limit);
}

/** Milliseconds until the bucket is empty again (OpenAI's x-ratelimit-reset-*). */
export function msUntilEmpty(used: number, limit: number): number {
  return used <= 0 ? 0 : Math.ceil((used * MINUTE_MS) / limit);
}

/** Milliseconds from `nowMs` to the next UTC midnight (when the day's budget starts over). */
export function msToNextDay(nowMs: number): number {
  return DAY_MS - (((nowMs % DAY_MS) + DAY_MS) % DAY_MS);
}

/** The UTC day of `nowMs`, "YYYY-MM-DD". */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** Why a request is not admitted, in the order they are checked. */
export type LimitReason = 'concurrency' | 'requests' | 'tokens' | 'budget';

export interface AdmissionInput {
  readonly limits: TenantLimits;
  readonly inFlight: number;
  /** Used of each bucket now (0 where there is no such limit). */
  readonly requestsUsed: number;
  readonly tokensUsed: number;
  /** Today's tokens: used plus reserved by requests still open. */
  readonly todayTokens: number;
  /** The request's reservation: prompt estimate + max_tokens (or the completion reserve). */
  readonly cost: number;
  readonly nowMs: number;
}

export type AdmissionVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: LimitReason;
      /** When a retry may be admitted; undefined = never as it stands (the request is larger than the limit). */
      readonly retryAfterMs: number | undefined;
    };

const ADMIT: AdmissionVerdict = { ok: true };
/** A tenant at max_concurrent: no one can say when a request ends; retry after about a second. */
export const CONCURRENCY_RETRY_MS = 1_000;

/**
 * Pure: the token limit a reservation of `cost` exceeds by itself, so that no bucket, however
 * empty, could ever hold it (undefined = none): it is refused before anything else is judged, and
 * told not to retry.
 */
export function oversizedFor(
  limits: Pick<TenantLimits, 'tokensPerMinute' | 'tokensPerDay'>,
  cost: number,
): 'tokens' | 'budget' | undefined {
  if (limits.tokensPerMinute !== undefined && cost > limits.tokensPerMinute) return 'tokens';
  if (limits.tokensPerDay !== undefined && cost > limits.tokensPerDay) return 'budget';
  return undefined;
}

/**
 * Pure: a request larger than a token limit itself first (whatever is in flight or used: it can
 * never be admitted), then concurrency → request rate → token rate → daily budget, the first that
 * fails says why.
 */
export function judgeAdmission(input: AdmissionInput): AdmissionVerdict {
  const { limits, cost } = input;
  const oversized = oversizedFor(limits, cost);
  if (oversized !== undefined) return { ok: false, reason: oversized, retryAfterMs: undefined };
  if (limits.maxConcurrent !== undefined && input.inFlight >= limits.maxConcurrent) {
    return { ok: false, reason: 'concurrency', retryAfterMs: CONCURRENCY_RETRY_MS };
  }
  const rpm = limits.requestsPerMinute;
  if (rpm !== undefined && input.requestsUsed + 1 > rpm) {
    return { ok: false, reason: 'requests', retryAfterMs: msUntilRoom(input.requestsUsed, rpm, 1) };
  }
  const tpm = limits.tokensPerMinute;
  if (tpm !== undefined && input.tokensUsed + cost > tpm) {
    return { ok: false, reason: 'tokens', retryAfterMs: cost > tpm ? undefined : msUntilRoom(input.tokensUsed, tpm, cost) };
  }
  const tpd = limits.tokensPerDay;
  if (tpd !== undefined && input.todayTokens + cost > tpd) {
    return { ok: false, reason: 'budget', retryAfterMs: cost > tpd ? undefined : msToNextDay(input.nowMs) };
  }
  return ADMIT;
}

/** The rate windows a tenant's answers describe (x-ratelimit-*), for the limits it has. */
export interface RateFigures {
  readonly requests?: { readonly limit: number; readonly remaining: number; readonly resetMs: number };
  readonly tokens?: { readonly limit: number; readonly remaining: number; readonly resetMs: number };
}

export function rateFigures(limits: TenantLimits, requestsUsed: number, tokensUsed: number): RateFigures | undefined {
  const rpm = limits.requestsPerMinute;
  const tpm = limits.tokensPerMinute;
  if (rpm === undefined && tpm === undefined) return undefined;
  return {
    ...(rpm === undefined
      ? {}
      : {
          requests: {
            limit: rpm,
            remaining: Math.max(0, Math.floor(rpm - requestsUsed)),
            resetMs: msUntilEmpty(requestsUsed, rpm),
          },
        }),
    ...(tpm === undefined
      ? {}
      : { tokens: { limit: tpm, remaining: Math.max(0, Math.floor(tpm - tokensUsed)), resetMs: msUntilEmpty(tokensUsed, tpm) } }),
  };
}
