// The token counts — Anthropic's (`POST /v1/messages/count_tokens`) and llama-server's OpenAI-style
// ones (`POST /v1/chat/completions/input_tokens`, `/v1/responses/input_tokens`) — answered by the
// gateway itself where no node for the model counts natively (kind `openai`, a vLLM or Ollama
// release that predates the Messages routes, a llama-server build before b7187, any server but
// llama-server for the OpenAI-style ones: routing/node-endpoints.ts), or where one would have to
// load the model to count (a router that lists it unloaded or asleep: a count never loads a model,
// §7.z of docs/protocols.md — a router's own count would load it, and at `--models-max` evict the
// model others are using, for an answer the gateway can give). Else the request goes to a node as
// before. The count is `{"input_tokens": N}`
// (with `"object": "response.input_tokens"` on the OpenAI-style routes, as llama-server answers)
// over what a tokenizer would see of the body (system, messages, tools: anthropic-prompt.ts;
// instructions and input for a Responses body):
//   - `tokenizer`: a node that has the model loaded counted it with its own tokenizer (the same
//     call the prompt sizing makes: prompt-size.ts), plus the chat template's allowance;
//   - `bound`: no such node (none has the model loaded, or none has a tokenizer request we know, or
//     it did not answer in time): the gateway's upper bound for the prompt (prompt-size.ts: the
//     bytes, tightened by what the fleet's answers taught), never below the true count.
// The `x-switchyard-count` header says which. A count never loads a model: the tokenizer is asked
// only of a node that has the model loaded (docs/protocols-endpoints.md).

import { badRequest, type GatewayError } from '#src/core/errors.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { fleetRatio, residencyOf } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { endpointLack } from '#src/routing/index.ts';
import {
  countPromptTokens,
  exactBounds,
  pickTokenizerNode,
  promptBounds,
  promptText,
  type PromptBounds,
  type SizingDeps,
} from './prompt-size.ts';

/** The header that says how the gateway counted: `tokenizer` or `bound`. */
export const COUNT_HEADER = 'x-switchyard-count';
/** With a `tokenizer` count: the node whose tokenizer counted. */
export const COUNT_NODE_HEADER = 'x-switchyard-count-node';

/** A request the gateway answered itself, sent to no node. */
export interface AnsweredHere {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** What a count reads of the request. */
export interface CountRequest {
  readonly endpoint: InferenceEndpoint;
  readonly resolved: { readonly model: string; readonly json: Readonly<Record<string, unknown>> };
  readonly settings: { readonly tokenizeTimeoutMs: number };
  readonly signal: AbortSignal;
}

type CountNode = Pick<
  NodeView,
  'spec' | 'capacity' | 'lackingEndpoints' | 'modelsById' | 'health' | 'discovery' | 'knownContexts'
>;

/**
 * Pure: whether the gateway counts `model`'s prompts on `endpoint` itself: some node lists the
 * model, and either none of those that do (and are not dead) serves the endpoint, or — for a count
 * that `neverLoads` — one that serves it has the model not loaded (it would load it to count, and
 * routing might pick it). A model no node lists is left to routing (its 404, or a remote site).
 */
export function gatewayCounts(nodes: readonly CountNode[], model: string, endpoint: InferenceEndpoint): boolean {
  let listed = false;
  let native = false;
  for (const node of nodes) {
    if (!node.modelsById.has(model)) continue;
    listed = true;
    if (node.health.status === 'dead' || endpointLack(node, endpoint) !== undefined) continue;
    if (residencyOf(node, model).state !== 'loaded') return true;
    native = true;
  }
  return listed && !native;
}

/** What each count's body must hold (as the servers refuse it), and the `object` its answer names. */
interface CountShape {
  readonly required: (json: Readonly<Record<string, unknown>>) => GatewayError | undefined;
  readonly object: string | undefined;
}

const COUNT_SHAPES: Readonly<Partial<Record<InferenceEndpoint, CountShape>>> = Object.freeze({
  '/v1/messages/count_tokens': {
    required: (json) =>
      Array.isArray(json.messages) ? undefined : badRequest('messages: Field required (an array of messages)', 'messages'),
    object: undefined,
  },
  '/v1/chat/completions/input_tokens': {
    required: (json) =>
      Array.isArray(json.messages) ? undefined : badRequest("'messages' is required (an array of messages)", 'messages'),
    object: 'response.input_tokens',
  },
  '/v1/responses/input_tokens': {
    required: (json) =>
      typeof json.input === 'string' || Array.isArray(json.input)
        ? undefined
        : badRequest("'input' is required (a string or an array of items)", 'input'),
    object: 'response.input_tokens',
  },
});

/** Pure: the answer for a count of `tokens`, saying how it was made (`object`: the OpenAI-style routes' `response.input_tokens`). */
export function countAnswer(tokens: number, how: 'tokenizer' | 'bound', node?: string, object?: string): AnsweredHere {
  const headers: Record<string, string> = { [COUNT_HEADER]: how };
  if (node !== undefined) headers[COUNT_NODE_HEADER] = node;
  const body = object === undefined ? { input_tokens: tokens } : { input_tokens: tokens, object };
  return { status: 200, body: JSON.stringify(body), headers };
}

/**
 * The count at the gateway, or undefined: a node counts this model natively (send the request on).
 * A body without a `messages` array is refused as Anthropic refuses it.
 */
export function countHere(
  deps: SizingDeps & { readonly clock: { now(): number } },
  request: CountRequest,
): AnsweredHere | GatewayError | Promise<AnsweredHere> | undefined {
  const { model, json } = request.resolved;
  const nodes = deps.fleet.views();
  const shape = COUNT_SHAPES[request.endpoint];
  if (shape === undefined || !gatewayCounts(nodes, model, request.endpoint)) return undefined;
  const refused = shape.required(json);
  if (refused !== undefined) return refused;
  const text = promptText(request.endpoint, json);
  const bounds = promptBounds(text, fleetRatio(nodes, model, deps.clock.now()));
  const tokenizer = pickTokenizerNode(nodes, model);
  if (tokenizer === undefined) return countAnswer(bounds.upper, 'bound', undefined, shape.object);
  return countPromptTokens(tokenizer, model, text, {
    dispatcher: deps.pools.get(tokenizer.spec),
    timeoutMs: request.settings.tokenizeTimeoutMs,
    signal: request.signal,
  }).then((count) => countedAnswer(count, text, bounds, tokenizer.spec.name, shape.object));
}

function countedAnswer(
  count: number | undefined,
  text: Parameters<typeof exactBounds>[1],
  bounds: PromptBounds,
  node: string,
  object: string | undefined,
): AnsweredHere {
  if (count === undefined) return countAnswer(bounds.upper, 'bound', undefined, object);
  return countAnswer(exactBounds(count, text, bounds).upper, 'tokenizer', node, object);
}
