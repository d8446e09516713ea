// Pure: what a node's "prompt too long" refusal may change. Its context is remembered for it alone;
// its prompt count (the model's tokenizer counting, as /tokenize would) becomes the prompt's bounds
// for the remaining attempts, never past the gateway's own upper bound; without a count the refusal
// still proves the prompt exceeds that context less the answer. A refusal the gateway's own figures
// disprove (the node advertises room for the whole request, or counts more tokens than the prompt
// can have) is a contradiction: not believed, and counted against the node like a failed request.

import { ctxFor } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import { hasUncountedParts, promptText, upperBoundTokens } from './prompt-size.ts';
import type { UpstreamErrorMeaning } from '../attempt/upstream-error.ts';

/**
 * Special tokens (BOS, EOS) a server may add beyond the upper bound's template allowance, e.g. to a
 * completions prompt that has no messages: below this much past the bound nothing is called a lie.
 */
export const CONTRADICTION_SLACK_TOKENS = 16;

export interface OverflowFacts {
  /** The prompt size routing uses now (its upper bound). */
  readonly estimate: number | undefined;
  /** The prompt's lower bound routing uses now; undefined = the estimate is exact. */
  readonly lowerBound?: number | undefined;
  /** The gateway's own upper bound on the prompt's tokens (text bytes + template allowance). */
  readonly upperBound: number;
  /** Images, audio or other parts the upper bound does not count: a node may then count more. */
  readonly uncountedParts: boolean;
  readonly maxTokens: number | undefined;
  /** The per-request context the node advertises for the model (polled or learned); 0 = unknown. */
  readonly advertisedCtx: number;
  readonly reportedCtx: number | undefined;
  readonly reportedPromptTokens: number | undefined;
}

export interface OverflowJudgement {
  /** The prompt size to route the remaining attempts by. */
  readonly promptTokens: number | undefined;
  /**
   * The lower bound for the remaining attempts: a plausible refusal's count collapses the bounds
   * (it is the model's tokenizer counting, as /tokenize would); without a count, the refusal still
   * proves the request did not fit the node's context.
   */
  readonly minPromptTokens: number | undefined;
  /** The context to remember for this node (and this node only), if any. */
  readonly learnCtx: number | undefined;
  /** Why the refusal cannot be true; undefined when it is plausible. */
  readonly contradiction: string | undefined;
}

export function judgeOverflowRefusal(f: OverflowFacts): OverflowJudgement {
  const reported = f.reportedPromptTokens;
  const clamped = reported === undefined ? undefined : Math.min(Math.max(0, reported), f.upperBound);
  const promptTokens = clamped === undefined ? f.estimate : f.estimate === undefined ? clamped : Math.min(f.estimate, clamped);
  // The most the whole request can take: llama.cpp refuses a prompt >= n_ctx, vLLM prompt + max_tokens > n_ctx.
  const need = f.upperBound + CONTRADICTION_SLACK_TOKENS + Math.max(1, f.maxTokens ?? 0);
  const bound = `a prompt of at most ${f.upperBound} tokens${f.maxTokens === undefined ? '' : ` + ${f.maxTokens} max_tokens`}`;
  const ctxSelfContradicts = !f.uncountedParts && f.reportedCtx !== undefined && f.reportedCtx >= need;
  let contradiction: string | undefined;
  if (!f.uncountedParts && reported !== undefined && reported > f.upperBound + CONTRADICTION_SLACK_TOKENS) {
    contradiction = `counted ${reported} prompt tokens for ${bound}`;
  } else if (ctxSelfContradicts) {
    contradiction = `stated a context of ${f.reportedCtx} tokens yet refused ${bound}`;
  } else if (!f.uncountedParts && f.advertisedCtx > 0 && f.advertisedCtx >= need) {
    contradiction = `advertises a context of ${f.advertisedCtx} tokens yet refused ${bound}`;
  } else if (f.reportedCtx !== undefined && f.advertisedCtx > 0 && f.reportedCtx !== f.advertisedCtx) {
    contradiction = `stated a context of ${f.reportedCtx} tokens but advertises ${f.advertisedCtx}`;
  }
  // A figure the refusal itself disproves is not remembered; any other judges this node from now on.
  return {
    promptTokens,
    minPromptTokens: raisedLowerBound(f, promptTokens, clamped, contradiction),
    learnCtx: ctxSelfContradicts ? undefined : f.reportedCtx,
    contradiction,
  };
}

function raisedLowerBound(
  f: OverflowFacts,
  promptTokens: number | undefined,
  counted: number | undefined,
  contradiction: string | undefined,
): number | undefined {
  if (contradiction !== undefined || promptTokens === undefined) return f.lowerBound;
  const lower = f.lowerBound ?? promptTokens;
  if (counted !== undefined) return Math.min(promptTokens, Math.max(lower, counted));
  const ctx = f.reportedCtx ?? f.advertisedCtx;
  // The node refused prompt + answer > ctx, so the prompt has more than ctx − answer tokens.
  return ctx > 0 ? Math.min(promptTokens, Math.max(lower, ctx - Math.max(1, f.maxTokens ?? 1))) : lower;
}

/** The facts for one refusal by `node`, from the request and the node's routing view. */
export function overflowFacts(
  node: NodeView,
  req: RouteRequest,
  request: { readonly endpoint: string; readonly json: Readonly<Record<string, unknown>> },
  meaning: Extract<UpstreamErrorMeaning, { kind: 'context_overflow' }>,
): OverflowFacts {
  return {
    estimate: req.promptTokens,
    lowerBound: req.minPromptTokens,
    upperBound: upperBoundTokens(promptText(request.endpoint, request.json)),
    uncountedParts: hasUncountedParts(request.json),
    maxTokens: req.maxTokens,
    advertisedCtx: ctxFor(node, req.model),
    reportedCtx: meaning.nCtx,
    reportedPromptTokens: meaning.promptTokens,
  };
}
