// The tokens one answer used, as the gateway charges them (docs/tenants.md, "What is charged"):
// from its `usage` (a JSON answer's, a stream's usage chunk or last event); for a stream cut short,
// what the node reported last but never less than what the gateway relayed; and for a request the
// node was sent but whose client left before anything came back, an estimate. Tenants' limits and
// accounting settle from it.

export interface AnswerUsage {
  /** undefined = not stated by the node (the tenant is charged its reservation's prompt estimate). */
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  /**
   * Where the figures come from. `usage`: the node's own count. `seen`: the completion tokens
   * counted by the gateway from what it relayed of a stream cut short (more than the node had
   * reported, or the node reported nothing); the prompt is the node's when it stated one.
   * `estimated`: the node reported nothing and nothing was relayed: the prompt as the gateway
   * sized it, and the completion tokens estimated from the node's learned rate (estimatedWork).
   */
  readonly counted: 'usage' | 'seen' | 'estimated';
  /** An estimate's basis: `decode_rate` (the node's learned rate over the time it had the request), or `prompt` alone (no rate known). */
  readonly basis?: 'decode_rate' | 'prompt' | undefined;
  /** A Responses answer's id (`resp_…`), when it stated one: routing remembers its node for `previous_response_id`. */
  readonly answerId?: string | undefined;
}

/** How a read answer ended: complete, or cut short (the client left, the node broke off, the total timeout). */
export type AnswerEnd = 'whole' | 'cut';

/** A node's generation speed for a model, as learned from its answers (capacity/learned-figures.ts; failover/attempt-feedback.ts). */
export interface KnownRate {
  readonly tokensPerSecond: number;
  /** From sending a request to its first generated token; undefined = not measured (0 is taken). */
  readonly firstTokenMs: number | undefined;
}

/** What one answer showed of the node's speed (the shape capacity/learned-figures.ts learns from). */
export interface DecodeObserved {
  /** Tokens generated over `decodeMs`. */
  readonly tokens: number;
  readonly decodeMs: number;
  /** A stream's: from sending the request to its first generated token. */
  readonly firstTokenMs?: number | undefined;
}

/** What the gateway knows of a request's work when it sends it to a node (failover-loop.ts). */
export interface WorkAsk {
  /** The prompt as the gateway sized it (the reservation's figure); undefined = not sized (a count: nothing to charge). */
  readonly promptTokens: number | undefined;
  /** The most completion tokens the request could make the node generate: max_tokens (or the reserve) for each answer asked. */
  readonly completionCap: number;
  /** Answers asked (`n`, `best_of`): each is generated at the node's rate. */
  readonly choices: number;
  /** The node's learned speed for the model; undefined = none usable (too few answers, none lately, a site). */
  readonly rate?: KnownRate | undefined;
}

/**
 * Pure: what a node that was sent the request is known to have done when the client left before
 * anything of its answer that states its usage could be read: the prompt as the gateway sized it,
 * and the tokens it generated until the cancel reached it, estimated from its learned speed — the
 * time it had the request (`elapsedMs`: from sending to the cancel) less its learned time to the
 * first token, at its learned tokens per second, for each answer asked, never more than the
 * request allowed (`completionCap`). With no usable rate, the prompt alone, marked so (`basis:
 * 'prompt'`). undefined = the prompt was not sized (nothing to charge).
 */
export function estimatedWork(work: WorkAsk, elapsedMs: number | undefined): AnswerUsage | undefined {
  const { promptTokens, rate } = work;
  if (promptTokens === undefined) return undefined;
  if (rate === undefined || elapsedMs === undefined || !(elapsedMs >= 0) || !(rate.tokensPerSecond > 0)) {
    return { promptTokens, completionTokens: 0, counted: 'estimated', basis: 'prompt' };
  }
  const generatingMs = Math.max(0, elapsedMs - (rate.firstTokenMs ?? 0));
  const generated = Math.floor(((generatingMs * rate.tokensPerSecond) / 1000) * Math.max(1, work.choices));
  return {
    promptTokens,
    completionTokens: Math.max(0, Math.min(generated, work.completionCap)),
    counted: 'estimated',
    basis: 'decode_rate',
  };
}
