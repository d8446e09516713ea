// Pure: a streamed answer's first-token deadline (`[upstream] first_token_timeout`, or the node's
// own). A node that accepted a streamed request — sent its head, or nothing yet — but sent no first
// token within it is abandoned, and the request fails over, before any byte reached the client
// (the stream is held until then: first-token-gate.ts). The first token is the first event that
// carries generated output (seen-tokens.ts: non-empty text, reasoning, tool-call arguments), or the
// stream's end; a role delta, `message_start`, `response.created`, an SSE comment or a keep-alive
// prove the node alive, not generating, and do not count.
//
// Where it does not apply: a request that does not stream (its whole answer comes at once, after
// generation: only headers_timeout bounds it), a forward to another site (that site bounds its own
// nodes, and may be failing over), and a deadline of 0. A request that loads its model (the
// scheduler gave it a load ticket: the model is unloaded, loading, asleep, or being switched to on a
// router) is never abandoned by it while it loads: routing.load_timeout bounds the wait for the
// answer's head, and the deadline runs from that head.

export interface FirstTokenDeadline {
  readonly timeoutMs: number;
  /** Runs from the answer's head (the attempt loads its model), not from sending the request. */
  readonly fromHead: boolean;
}

export interface FirstTokenFacts {
  /** The client asked for a stream (an Ollama native request streams unless `"stream": false`). */
  readonly streams: boolean;
  /** `[upstream] first_token_timeout`. */
  readonly configuredMs: number;
  /** The node's own `first_token_timeout`; undefined = the `[upstream]` one. */
  readonly nodeMs: number | undefined;
  /** The attempt loads its model (the admission carries a load ticket). */
  readonly loadsModel: boolean;
}

/** The attempt's deadline; undefined = none. */
export function firstTokenDeadline(facts: FirstTokenFacts): FirstTokenDeadline | undefined {
  if (!facts.streams) return undefined;
  const timeoutMs = facts.nodeMs ?? facts.configuredMs;
  if (!(timeoutMs > 0)) return undefined;
  return facts.loadsModel ? { timeoutMs, fromHead: true } : { timeoutMs, fromHead: false };
}

/** Why an abandoned attempt failed (its error, in the request log's attempts and the 502's list). */
export function firstTokenTimeoutError(deadline: FirstTokenDeadline): string {
  const since = deadline.fromHead ? 'after the answer head' : 'of sending the request';
  return `no first token within ${deadline.timeoutMs}ms ${since} (upstream.first_token_timeout)`;
}
