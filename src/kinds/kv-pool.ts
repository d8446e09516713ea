// Pure: how a node's concurrent requests share its KV cache, as far as the gateway must budget it.
// A llama-server's slots share one pool of n_ctx tokens (unified KV) or hold n_ctx each (per-slot,
// llamacpp-kv.ts); vLLM, SGLang and Ollama manage their cache themselves, so nothing is budgeted and
// a request may use the whole context.

import type { KvPool, ServerRole } from './server-kind.ts';

/** llama.cpp's: unified KV is one pool of n_ctx shared by every slot; per-slot KV is n_ctx for each slot. */
export const LLAMA_KV_POOL: KvPool = {
  budget: ({ nCtx, slots, mode }) => (mode === 'unified' ? nCtx : slots === undefined ? undefined : nCtx * slots),
  guaranteedCtx: ({ nCtx, slots, mode }) =>
    mode === 'unified' && slots !== undefined && slots > 0 ? Math.floor(nCtx / slots) : nCtx,
};

/** A node configured as another kind that still answered /props as a llama-server (router or single) has its pool. */
export function poolWhenLlamaServer(role: ServerRole): KvPool | undefined {
  return role === 'unknown' ? undefined : LLAMA_KV_POOL;
}
