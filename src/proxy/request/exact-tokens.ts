// I/O: an exact prompt size from a node's own tokenizer, when the cheap upper bound is too close to
// a context limit to decide. Asked only of a node that has the model loaded (a llama-server router
// would load it otherwise; its kind's request guards that too). Bounded in time; undefined on failure.

import type { Dispatcher } from 'undici';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { residencyOf } from '#src/capacity/index.ts';
import { tokenizerFor, type TokenizeDialect } from '#src/kinds/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { templateTokens, type PromptText } from './prompt-size.ts';

const MAX_TOKENIZE_ANSWER_BYTES = 8 * 1024 * 1024;

function dialectOf(node: NodeView): TokenizeDialect | undefined {
  return tokenizerFor(node.spec.kind, node.capacity.role);
}

/** Pure: the node to ask — healthy, has the model loaded, and has a tokenizer request we know. */
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
  const request = dialect.request(model, text.pieces.join('\n'));
  const answer = await requestBoundedJson(`${node.spec.url}${request.path}`, {
    dispatcher: options.dispatcher,
    method: 'POST',
    body: JSON.stringify(request.body),
    headers: node.spec.apiKey === undefined ? {} : { authorization: `Bearer ${node.spec.apiKey}` },
    timeoutMs: options.timeoutMs,
    maxBytes: MAX_TOKENIZE_ANSWER_BYTES,
    signal: options.signal,
  });
  if (!answer.ok || answer.status !== 200) return undefined;
  const count = dialect.count(answer.body);
  return count === undefined ? undefined : count + text.givenTokens + templateTokens(text);
}
