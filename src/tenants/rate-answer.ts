// Pure: how a tenant's limits show in answers, as OpenAI's API shows them so the official clients
// back off correctly: x-ratelimit-{limit,remaining,reset}-{requests,tokens} on every answer of a
// tenant with per-minute limits, and on a 429 also Retry-After (whole seconds, rounded up) and
// retry-after-ms (the openai clients read it first and wait exactly that long). A wait longer than
// the clients would honour (60 s), or none at all (a request larger than the limit), also says
// x-should-retry: false, so a client does not spend its retries on an answer that cannot change.
// The message names the limit and the tenant, never a key.

import { GatewayError } from '#src/core/errors.ts';
import type { LimitRefusal } from './admission-types.ts';
import type { RateFigures } from './limits.ts';

/** The longest wait the openai clients take from Retry-After; a longer one they replace with their own back-off. */
export const CLIENT_RETRY_CAP_MS = 60_000;

/** OpenAI's (Go's) duration format: "120ms", "1s", "1.5s", "6m0s", "1h2m3s". */
export function rateDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1_000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = (whole % 60_000) / 1_000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

export function rateHeaders(figures: RateFigures | undefined): Record<string, string> {
  if (figures === undefined) return {};
  const headers: Record<string, string> = {};
  if (figures.requests !== undefined) {
    headers['x-ratelimit-limit-requests'] = String(figures.requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(figures.requests.remaining);
    headers['x-ratelimit-reset-requests'] = rateDuration(figures.requests.resetMs);
  }
  if (figures.tokens !== undefined) {
    headers['x-ratelimit-limit-tokens'] = String(figures.tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(figures.tokens.remaining);
    headers['x-ratelimit-reset-tokens'] = rateDuration(figures.tokens.resetMs);
  }
  return headers;
}

const LIMIT_NAMES: Readonly<Record<LimitRefusal['reason'], string>> = {
  concurrency: 'requests in flight (max_concurrent)',
  requests: 'requests per minute (requests_per_minute)',
  tokens: 'tokens per minute (tokens_per_minute)',
  budget: 'tokens per day (tokens_per_day)',
};

/** The 429's headers: the rate windows, and when to retry. */
export function limitedHeaders(refusal: LimitRefusal): Record<string, string> {
  const headers = rateHeaders(refusal.figures);
  const wait = refusal.retryAfterMs;
  if (wait !== undefined) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(wait / 1_000)));
    headers['retry-after-ms'] = String(Math.max(0, Math.ceil(wait)));
  }
  if (wait === undefined || wait > CLIENT_RETRY_CAP_MS) headers['x-should-retry'] = 'false';
  return headers;
}

/**
 * The 429 itself: OpenAI's shape, `type` "requests" or "tokens", code rate_limit_exceeded. A request
 * larger than the limit itself is worded as OpenAI words one larger than a TPM limit ("Request too
 * large for … Limit X, Requested Y"): the limit and the reservation, and what makes it smaller.
 */
export function limitedError(refusal: LimitRefusal): GatewayError {
  const wait = refusal.retryAfterMs;
  const about =
    wait === undefined
      ? `Request too large for tenant '${refusal.tenant}' on ${LIMIT_NAMES[refusal.reason]}: limit ${refusal.limit}, requested ${refusal.requested}.`
      : `Rate limit reached for tenant '${refusal.tenant}' on ${LIMIT_NAMES[refusal.reason]}: limit ${refusal.limit}, used ${refusal.used}, requested ${refusal.requested}.`;
  const advice =
    wait === undefined
      ? ' The request is larger than the limit itself (its reservation: the prompt, plus max_tokens for each answer asked, n or best_of); send a smaller one (fewer prompt tokens, a lower max_tokens, or fewer answers).'
      : ` Please try again in ${rateDuration(wait)}.`;
  return new GatewayError('GW_RATE_LIMITED', about + advice, {
    status: 429,
    openaiType: refusal.reason === 'tokens' || refusal.reason === 'budget' ? 'tokens' : 'requests',
    openaiCode: 'rate_limit_exceeded',
  });
}
