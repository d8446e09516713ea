// How big a request's prompt is, as far as the gateway can tell before routing: proven bounds from
// its bytes, tightened by the bytes-per-token ratio the fleet's answers taught, collapsed by the
// node's own tokenizer when the bounds are too far apart to decide where it fits (or whether it
// fits at all). The in-thread gateway and every request worker run this same function.

import { ctxFor, fleetRatio } from '#src/capacity/index.ts';
import { truncatesSilently } from '#src/kinds/index.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import type { NodeView, RoutingSnapshot } from '#src/nodes/index.ts';
import type { Dispatcher } from 'undici';
import { largestContext } from '#src/routing/index.ts';
import { countPromptTokens, pickTokenizerNode } from './exact-tokens.ts';
import { exactBounds, promptBounds, ratioSample, textBytes, type PromptBounds } from './prompt-bounds.ts';
import { hasUncountedParts, promptText, wantsExactCount, type PromptText } from './prompt-size.ts';

/** The request path's own deps satisfy these as they are: nothing is built per request to size it. */
export interface SizingDeps {
  /** The fleet-view port (its views and snapshot). */
  readonly fleet: {
    readonly views: () => readonly NodeView[];
    /** The views that may serve a model (the fleet-view port's; without it, every view). */
    readonly offering?: (model: string) => readonly NodeView[];
    readonly snapshot: () => RoutingSnapshot;
  };
  /** The node's connection pool, which also carries its tokenizer call. */
  readonly pools: { get(node: NodeView['spec']): Dispatcher };
}

/** Pure: whether asking a tokenizer cannot change the verdict: even the proven lower bound exceeds every context. */
export function tokenizerIsMoot(bounds: PromptBounds, answerTokens: number, largest: number): boolean {
  return largest > 0 && bounds.lower + answerTokens > largest;
}

export interface SizingAsk {
  readonly endpoint: string;
  readonly model: string;
  readonly json: Readonly<Record<string, unknown>>;
  readonly maxTokens: number | undefined;
  readonly nowMs: number;
  readonly tokenizeTimeoutMs: number;
}

/**
 * The prompt's bounds: at once (no promise, no turn of the event loop) unless a node's tokenizer
 * is asked, which only bounds too far apart to decide need.
 */
export function sizePrompt(deps: SizingDeps, ask: SizingAsk, signal: AbortSignal): PromptBounds | Promise<PromptBounds> {
  const text = promptText(ask.endpoint, ask.json);
  // Only the nodes that may serve the model: the others would be skipped, one by one, every request.
  const nodes = deps.fleet.offering?.(ask.model) ?? deps.fleet.views();
  const bounds = promptBounds(text, fleetRatio(nodes, ask.model, ask.nowMs), textBytes(text));
  if (!wantsExactCount(bounds.upper, ask.maxTokens, nodes, ask.model)) return bounds;
  if (tokenizerIsMoot(bounds, Math.max(1, ask.maxTokens ?? 1), largestContext(deps.fleet.snapshot(), ask.model))) return bounds;
  const tokenizer = pickTokenizerNode(nodes, ask.model);
  if (tokenizer === undefined) return bounds;
  return countedBounds(deps, ask, signal, { tokenizer, text, bounds });
}

/** The bounds collapsed by `tokenizer`'s count of the prompt (the proven bounds when it gives none). */
async function countedBounds(
  deps: SizingDeps,
  ask: SizingAsk,
  signal: AbortSignal,
  c: { readonly tokenizer: NodeView; readonly text: PromptText; readonly bounds: PromptBounds },
): Promise<PromptBounds> {
  const count = await countPromptTokens(c.tokenizer, ask.model, c.text, {
    dispatcher: deps.pools.get(c.tokenizer.spec),
    timeoutMs: ask.tokenizeTimeoutMs,
    signal,
  });
  return count === undefined ? c.bounds : exactBounds(count, c.text, c.bounds);
}

/** A node answered 200 and stated its prompt count: the registry learns its bytes per token (pure sample, then one call). */
export function learnFromAnswer(
  registry: Pick<NodeRegistry, 'learnTokenRatio'>,
  node: NodeView,
  ask: { readonly endpoint: string; readonly model: string; readonly json: Readonly<Record<string, unknown>> },
  promptTokens: number | undefined,
): void {
  if (promptTokens === undefined) return;
  const sample = ratioSample(promptText(ask.endpoint, ask.json), {
    promptTokens,
    uncountedParts: hasUncountedParts(ask.json),
    truncates: node.facts?.truncates ?? truncatesSilently(node.spec.kind, node.capacity.role),
    ctx: node.facts?.models.get(ask.model)?.ctx ?? ctxFor(node, ask.model),
  });
  if (sample !== undefined) registry.learnTokenRatio(node.spec.name, node.spec.url, ask.model, sample);
}
