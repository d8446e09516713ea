// The plain data of tenant admission: what the request path asks the ledger (its reservation),
// what it answers, and how a request ends. All of it crosses a MessagePort unchanged
// (src/workers/), so the one ledger in the owner thread judges every worker's requests.

import type { LimitReason, RateFigures } from './limits.ts';

export interface TenantAsk {
  readonly tenant: string;
  /** The served model id (a row of the day's usage). */
  readonly model: string;
  /** The sized prompt's upper bound. */
  readonly promptTokens: number;
  /** Tokens reserved: the prompt estimate + max_tokens, or routing.completion_reserve without it. */
  readonly reserveTokens: number;
}

/** How an admitted request ended, as its answer's usage says. */
export interface TenantOutcome {
  /** false = nothing was served (a refusal, an error before any answer): the reservation is given back. */
  readonly served: boolean;
  /** From the answer's usage; undefined = not stated (the reservation's share is charged). */
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
}

export interface LimitRefusal {
  readonly tenant: string;
  readonly reason: LimitReason;
  /** The limit that refused, and what it is at. */
  readonly limit: number;
  readonly used: number;
  readonly requested: number;
  /** undefined = the request is larger than the limit itself: retrying cannot help. */
  readonly retryAfterMs: number | undefined;
  readonly figures: RateFigures | undefined;
}

export type TenantDecision =
  | { readonly kind: 'admitted'; readonly figures: RateFigures | undefined }
  | { readonly kind: 'limited'; readonly refusal: LimitRefusal };

/** What the admission port gives the request path: a decision, and for an admitted one its settlement. */
export type TenantAdmission =
  | { readonly kind: 'admitted'; readonly figures: RateFigures | undefined; readonly settle: (outcome: TenantOutcome) => void }
  | { readonly kind: 'limited'; readonly refusal: LimitRefusal };
