// I/O: an exact prompt size from a node's own tokenizer, when the cheap upper bound is too close to
// a context limit to decide. Asked only of a node that has the model loaded (a llama-server router
// would load it otherwise; `autoload=false` guards that too). Bounded in time; undefined on failure.

import type { Dispatcher } from 'undici';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { isLlamaLike, residencyOf } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { templateTokens, type PromptText } from './prompt-size.ts';

const MAX_TOKENIZE_ANSWER_BYTES = 8 * 1024 * 1024;

type TokenizeDialect = 'llama' | 'openai-server';

function dialectOf(node: NodeView): TokenizeDialect | undefined {
  if (isLlamaLike(node)) return 'llama';
  if (node.spec.kind === 'vllm' || node.spec.kind === 'sglang') return 'openai-server';
  return undefined;
}

/** Pure: the node to ask — healthy, has the model loaded, and speaks a /tokenize we know. */
export function pickTokenizerNode(nodes: readonly NodeView[], model: string): NodeView | undefined {
  return nodes.find(
    (n) =>
      n.health.status !== 'dead' &&
      n.discovery.phase !== 'untried' &&
      residencyOf(n, model).state === 'loaded' &&
      dialectOf(n) !== undefined,
  );
}

export async function countPromptTokens(
  node: NodeView,
  model: string,
  text: PromptText,
  options: { readonly dispatcher: Dispatcher; readonly timeoutMs: number; readonly signal?: AbortSignal },
): Promise<number | undefined> {
  const dialect = dialectOf(node);
  if (dialect === undefined) return undefined;
  const joined = text.pieces.join('\n');
  const llama = dialect === 'llama';
  const answer = await requestBoundedJson(`${node.spec.url}/tokenize${llama ? '?autoload=false' : ''}`, {
    dispatcher: options.dispatcher,
    method: 'POST',
    body: JSON.stringify(llama ? { model, content: joined, add_special: true } : { model, prompt: joined }),
    headers: node.spec.apiKey === undefined ? {} : { authorization: `Bearer ${node.spec.apiKey}` },
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_TOKENIZE_ANSWER_BYTES,
    signal: options.signal,
  });
  if (!answer.ok || answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) return undefined;
  const body = answer.body as { tokens?: unknown; count?: unknown };
  const count = typeof body.count === 'number' ? body.count : Array.isArray(body.tokens) ? body.tokens.length : undefined;
  return count === undefined ? undefined : count + text.givenTokens + templateTokens(text);
}
