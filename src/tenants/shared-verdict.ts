// Pure: a tenant's admission judged from counters shared by every replica ([cluster]): the same
// verdict (limits.ts) over the figures the store answered, and each limit's share for a replica
// that cannot reach the store (limit / live replicas, at least 1).

import type { LimitRefusal, TenantAsk, TenantDecision } from './admission-types.ts';
import { judgeAdmission, rateFigures, type TenantLimits } from './limits.ts';

/** A tenant's counters as one place (the ledger, or the shared store) holds them, before this request. */
export interface TenantCounters {
  readonly inFlight: number;
  readonly requestsUsed: number;
  readonly tokensUsed: number;
  /** Today's tokens: used plus reserved by requests still open. */
  readonly todayTokens: number;
}

/** The verdict on `ask` at `counters` (before it), with the refusal's figures or the admitted request's rate figures. */
export function decideAt(ask: TenantAsk, limits: TenantLimits, counters: TenantCounters, nowMs: number): TenantDecision {
  const cost = ask.reserveTokens;
  const verdict = judgeAdmission({ limits, ...counters, cost, nowMs });
  if (verdict.ok)
    return { kind: 'admitted', figures: rateFigures(limits, counters.requestsUsed + 1, counters.tokensUsed + cost) };
  const refusal: LimitRefusal = {
    tenant: ask.tenant,
    reason: verdict.reason,
    ...refusedFigure(verdict.reason, limits, counters, cost),
    retryAfterMs: verdict.retryAfterMs,
    figures: rateFigures(limits, counters.requestsUsed, counters.tokensUsed),
  };
  return { kind: 'limited', refusal };
}

/** A replica's share of each limit while it counts alone among `liveReplicas` (at least 1 of each; a count that is not a number ≥ 1 counts as 1). */
export function limitsShare(limits: TenantLimits, liveReplicas: number): TenantLimits {
  const live = Number.isFinite(liveReplicas) && liveReplicas >= 1 ? Math.floor(liveReplicas) : 1;
  if (live === 1) return limits;
  const share = (limit: number | undefined): number | undefined =>
    limit === undefined ? undefined : Math.max(1, Math.floor(limit / live));
  return {
    maxConcurrent: share(limits.maxConcurrent),
    requestsPerMinute: share(limits.requestsPerMinute),
    tokensPerMinute: share(limits.tokensPerMinute),
    tokensPerDay: share(limits.tokensPerDay),
  };
}

export function refusedFigure(
  reason: LimitRefusal['reason'],
  limits: TenantLimits,
  at: TenantCounters,
  cost: number,
): Pick<LimitRefusal, 'limit' | 'used' | 'requested'> {
  switch (reason) {
    case 'concurrency':
      return { limit: limits.maxConcurrent ?? 0, used: at.inFlight, requested: 1 };
    case 'requests':
      return { limit: limits.requestsPerMinute ?? 0, used: Math.ceil(at.requestsUsed), requested: 1 };
    case 'tokens':
      return { limit: limits.tokensPerMinute ?? 0, used: Math.ceil(at.tokensUsed), requested: cost };
    case 'budget':
      return { limit: limits.tokensPerDay ?? 0, used: at.todayTokens, requested: cost };
  }
}
