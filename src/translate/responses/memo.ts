// What the answer's translation remembers of a Responses request: how the client named each tool
// the node was offered (a chat function name stands for a function, a namespaced function or a
// custom tool), and the request fields a `response` object echoes. Plain JSON, so it can cross a
// thread like any other request data.

import type { JsonObject } from '#src/translate/translation.ts';

/** The client's tool behind one chat function name. */
export interface ClientTool {
  /** `function` → `function_call` items; `custom` → `custom_tool_call` items (free-form text input). */
  readonly kind: 'function' | 'custom';
  /** The tool's name as the client declared it. */
  readonly name: string;
  /** The namespace the client declared it in (a `namespace` tool), if any. */
  readonly namespace?: string;
}

export interface ResponsesMemo {
  /** Chat function name → the client's tool; a name not here comes back as a plain function call. */
  readonly tools: Readonly<Record<string, ClientTool>>;
  /** The request's own fields every `response` object repeats (instructions, tools, tool_choice…). */
  readonly echo: JsonObject;
}

/** The input field a custom tool's free-form text travels in, as the one argument of its chat function. */
export const CUSTOM_INPUT = 'input';

/** The client's tool behind a chat function name (a plain function of that name when the memo does not know it). */
export function clientToolOf(memo: ResponsesMemo, chatName: string): ClientTool {
  const tool = Object.hasOwn(memo.tools, chatName) ? memo.tools[chatName] : undefined;
  return tool ?? { kind: 'function', name: chatName };
}

/** Reads the memo back (it is opaque to the gateway): a memo this translation did not make reads as empty. */
export function responsesMemo(memo: unknown): ResponsesMemo {
  if (typeof memo === 'object' && memo !== null && 'tools' in memo && 'echo' in memo) return memo as ResponsesMemo;
  return { tools: {}, echo: {} };
}
