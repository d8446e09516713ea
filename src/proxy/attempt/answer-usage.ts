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
   * sized it, and 0 completion tokens.
   */
  readonly counted: 'usage' | 'seen' | 'estimated';
}

/** How a read answer ended: complete, or cut short (the client left, the node broke off, the total timeout). */
export type AnswerEnd = 'whole' | 'cut';

/**
 * Pure: what a node that was sent the request is known to have done when nothing came back before
 * the client left (or nothing of its answer could be read): the prompt as the gateway sized it (the
 * reservation's figure), and no completion tokens — the tokens generated before the cancel reached
 * the node are not known, and are not guessed. undefined = the prompt was not sized (nothing to charge).
 */
export function estimatedWork(promptTokens: number | undefined): AnswerUsage | undefined {
  return promptTokens === undefined ? undefined : { promptTokens, completionTokens: 0, counted: 'estimated' };
}
