// A plain OpenAI-compatible server (OpenAI itself, or a proxy in front of anything): only the
// standard surface is assumed, so health is "`/v1/models` answers" and figures come from the listing.
// Its refusals are read in OpenAI's dialect and in those of the servers such a proxy may front.

import { llamacpp } from './llamacpp.ts';
import { ollama } from './ollama.ts';
import { firstMeaning, readRefusal, type RefusalDialect } from './refusal.ts';
import type { ServerKind } from './server-kind.ts';
import { sglang } from './sglang.ts';
import { vllm } from './vllm.ts';

const REFUSALS: RefusalDialect = {
  overflowTypes: [],
  overflowTexts: [/maximum context length/i],
  notFoundTexts: [/The model `.*` does not exist/i],
};

const FRONTED: readonly ServerKind[] = [llamacpp, vllm, sglang, ollama];

export const openai: ServerKind = {
  name: 'openai',
  healthPaths: ['/v1/models'],
  normalizeListing: (body) => body,
  capacity: undefined,
  tokenize: undefined,
  load: undefined,
  llamaLike: false,
  refusal: (status, body) => firstMeaning([readRefusal(REFUSALS, status, body), ...FRONTED.map((kind) => kind.refusal(status, body))]),
};
