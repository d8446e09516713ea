// Pure: whether a node is a llama-server, from its configured kind and how it answered. It decides
// the KV budget (slots share one pool of n_ctx) and which tokenizer request it understands.

import type { NodeKind } from '#src/config/types.ts';
import { LLAMACPP_STREAM_USAGE, LLAMACPP_TOKENIZE } from './llamacpp.ts';
import { serverKind } from './registry.ts';
import type { ServerRole, TokenizeDialect } from './server-kind.ts';
import type { StreamUsage } from './stream-usage.ts';

/** Configured as llama.cpp, or answered /props as a router or single server (`auto` nodes). */
export function isLlamaLike(kind: NodeKind, role: ServerRole): boolean {
  return serverKind(kind).kvPool(role) !== undefined;
}

/** The tokenizer request the node understands: llama.cpp's on any llama-server, else its kind's own. */
export function tokenizerFor(kind: NodeKind, role: ServerRole): TokenizeDialect | undefined {
  return isLlamaLike(kind, role) ? LLAMACPP_TOKENIZE : serverKind(kind).tokenize;
}

/** What the node's streams say of their usage: llama.cpp's on any llama-server, else its kind's own. */
export function streamUsageFor(kind: NodeKind, role: ServerRole): StreamUsage {
  return isLlamaLike(kind, role) ? LLAMACPP_STREAM_USAGE : serverKind(kind).streamUsage;
}
