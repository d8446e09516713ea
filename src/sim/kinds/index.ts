// The kinds a sim node can be, by name: each builds the handler that answers like that server.

import type { KindContext, KindHandler } from '#src/sim/exchange.ts';
import { llamacppHandler } from '#src/sim/kinds/llamacpp.ts';
import { llamacppRouterHandler } from '#src/sim/kinds/llamacpp-router.ts';
import { ollamaHandler } from '#src/sim/kinds/ollama.ts';
import { openaiHandler } from '#src/sim/kinds/openai.ts';
import { sglangHandler } from '#src/sim/kinds/sglang.ts';
import { vllmHandler } from '#src/sim/kinds/vllm.ts';

/** `port` reads the node's bound port (known only after it listens). */
export function createKindHandler(context: KindContext, port: () => number): KindHandler {
  const { node } = context;
  const [firstModel] = node.models;
  switch (node.kind) {
    case 'vllm':
      return vllmHandler(context);
    case 'llamacpp-router':
      return llamacppRouterHandler(context);
    case 'ollama':
      return ollamaHandler(context);
    case 'openai':
      return openaiHandler(context);
    case 'llamacpp':
    case 'sglang':
      if (firstModel === undefined) throw new Error(`a ${node.kind} node needs a model`);
      return node.kind === 'llamacpp' ? llamacppHandler(context, firstModel) : sglangHandler(context, firstModel, port);
  }
}
