// A Messages request → the Chat Completions body a node gets. Carried: model, max_tokens, system,
// messages (chat-messages.ts), tools and tool_choice (tool-definitions.ts), thinking (thinking.ts),
// stop_sequences → stop, temperature, top_p, top_k, metadata.user_id → user, stream (with the usage
// always asked: stream_options.include_usage). Refused (400 naming the field): what only Anthropic's
// side can do — MCP servers, a code-execution container. Dropped: service_tier, context_management
// and any other member a Chat Completions node has no word for (docs/protocols-endpoints.md, "Translation").

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslatedRequest, Untranslatable } from '../translation.ts';
import { CannotCarry, untranslatable } from '../untranslatable.ts';
import { chatMessages } from './chat-messages.ts';
import type { MessagesMemo } from './memo.ts';
import { systemMessage } from './system-prompt.ts';
import { thinkingFields } from './thinking.ts';
import { functionTools, toolChoice } from './tool-definitions.ts';

/** Sampling members both APIs name alike (top_k: vLLM, llama-server, SGLang and Ollama read it). */
const SAMPLING = ['temperature', 'top_p', 'top_k'] as const;

export function chatRequest(body: JsonObject): TranslatedRequest | Untranslatable {
  try {
    return carried(body);
  } catch (error) {
    if (error instanceof CannotCarry) return untranslatable(error.field, error.reason);
    throw error;
  }
}

function carried(body: JsonObject): TranslatedRequest {
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0)
    throw new CannotCarry(
      'mcp_servers',
      'MCP servers are connected by Anthropic’s API; a Chat Completions node cannot reach them',
    );
  if (body.container !== undefined && body.container !== null)
    throw new CannotCarry('container', 'code-execution containers exist only on Anthropic’s API');
  const stream = body.stream === true;
  const out: JsonObject = { model: body.model };
  const system = systemMessage(body.system);
  out.messages = system === undefined ? chatMessages(body.messages) : [system, ...chatMessages(body.messages)];
  if (body.max_tokens !== undefined) out.max_tokens = body.max_tokens;
  for (const key of SAMPLING) if (body[key] !== undefined && body[key] !== null) out[key] = body[key];
  const stopSequences = stopsOf(body.stop_sequences);
  if (stopSequences.length > 0) out.stop = stopSequences;
  const tools = functionTools(body.tools);
  if (tools !== undefined && tools.length > 0) Object.assign(out, { tools }, toolChoice(body.tool_choice));
  else if (isRecord(body.tool_choice) && body.tool_choice.type === 'none') out.tool_choice = 'none';
  const thinking = thinkingFields(body.thinking);
  Object.assign(out, thinking.fields);
  const user = isRecord(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof user === 'string' && user !== '') out.user = user;
  if (stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  const memo: MessagesMemo = { stopSequences, thinkingOff: thinking.off };
  return { kind: 'translated', body: out, stream, memo };
}

function stopsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string'))
    throw new CannotCarry('stop_sequences', 'must be an array of strings');
  return value as string[];
}
