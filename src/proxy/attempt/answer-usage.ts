// The tokens one answer used: from its `usage` (a JSON answer's, a stream's usage chunk), or — for
// a stream cut short before its usage came — counted from what was seen. Tenants' limits and
// accounting settle from it (docs/tenants.md).

export interface AnswerUsage {
  /** undefined = the answer stated none and nothing was seen to count (an error answer, say). */
  readonly promptTokens: number | undefined;
  readonly completionTokens: number | undefined;
  /** `usage`: the node's own count; `seen`: counted by the gateway from a stream cut short. */
  readonly counted: 'usage' | 'seen';
}
