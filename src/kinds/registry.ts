// The server kinds by name: exactly the names config validates (NODE_KINDS); the Record type makes
// a missing or extra kind a compile error. Adding a kind is one module and one line here.

import type { NodeKind } from '#src/config/types.ts';
import { auto } from './auto.ts';
import { llamacpp } from './llamacpp.ts';
import { ollama } from './ollama.ts';
import { openai } from './openai.ts';
import type { ServerKind } from './server-kind.ts';
import { sglang } from './sglang.ts';
import { vllm } from './vllm.ts';

const SERVER_KINDS: Readonly<Record<NodeKind, ServerKind>> = Object.freeze({ auto, vllm, llamacpp, ollama, sglang, openai });

export function serverKind(name: NodeKind): ServerKind {
  return SERVER_KINDS[name];
}

/** Every registered kind, in NODE_KINDS order. */
export function serverKinds(): readonly ServerKind[] {
  return Object.values(SERVER_KINDS);
}
