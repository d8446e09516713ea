// What these tests share: a chat completion stream written from a script (the chunks a chat node
// sends), the whole chat completion the same script stands for, and the openai SDK reading the
// translation's output through a `fetch` that answers it (no network): the client a Codex-like
// program would use is the judge of the events.

import OpenAI from 'openai';
import type { JsonObject, StreamTranslator, TranslationContext } from '#src/translate/translation.ts';

export const CONTEXT: TranslationContext = { requestId: 'req-7f3a', model: 'coder', nowSeconds: 1_800_000_000 };

export interface ChatCall {
  readonly id: string;
  readonly name: string;
  /** The arguments, as the node streams them piece by piece. */
  readonly pieces: readonly string[];
}

export interface ChatScript {
  readonly reasoning?: readonly string[];
  readonly text?: readonly string[];
  readonly calls?: readonly ChatCall[];
  readonly finish: string;
  readonly usage?: JsonObject;
}

export const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 100 },
  completion_tokens_details: { reasoning_tokens: 12 },
};

const chunk = (delta: JsonObject, finish: string | null = null): string =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'coder',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** The node's `data:` payloads for `script`, `[DONE]` included. */
export function chatChunks(script: ChatScript): string[] {
  const out = [chunk({ role: 'assistant', content: null })];
  for (const piece of script.reasoning ?? []) out.push(chunk({ reasoning_content: piece }));
  for (const piece of script.text ?? []) out.push(chunk({ content: piece }));
  for (const [index, call] of (script.calls ?? []).entries()) {
    out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const piece of call.pieces) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  out.push(chunk({}, script.finish));
  if (script.usage !== undefined)
    out.push(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'coder',
        choices: [],
        usage: script.usage,
      }),
    );
  out.push('[DONE]');
  return out;
}

/** The whole chat completion `script` stands for. */
export function chatCompletion(script: ChatScript): JsonObject {
  const message: JsonObject = { role: 'assistant', content: script.text === undefined ? null : script.text.join('') };
  if (script.reasoning !== undefined) message['reasoning_content'] = script.reasoning.join('');
  if (script.calls !== undefined)
    message['tool_calls'] = script.calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.pieces.join('') },
    }));
  const answer: JsonObject = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'coder',
    choices: [{ index: 0, message, finish_reason: script.finish }],
  };
  if (script.usage !== undefined) answer['usage'] = script.usage;
  return answer;
}

/** Feeds `data` payloads to the translator, then ends it: the client's whole SSE text. */
export function translateStream(translator: StreamTranslator, data: readonly string[], ended = true): string {
  return data.map((d) => translator.event(d)).join('') + (ended ? translator.end() : '');
}

export interface SseEvent {
  readonly event: string;
  readonly data: JsonObject;
}

/** The SSE text as events (`event:` name and parsed `data:`). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? '';
      const data = lines.find((line) => line.startsWith('data: '))?.slice(6) ?? '{}';
      return { event, data: JSON.parse(data) as JsonObject };
    });
}

/** An openai client whose every request is answered with `body` (SSE text or JSON), status `status`. */
export function clientAnswering(body: string, contentType: string, status = 200): OpenAI {
  return new OpenAI({
    apiKey: 'test',
    baseURL: 'http://127.0.0.1:9/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { status, headers: { 'content-type': contentType } }),
  });
}

/** What `client.responses.stream(…).finalResponse()` makes of the SSE text. */
export async function sdkFinalResponse(sse: string): Promise<OpenAI.Responses.Response> {
  const client = clientAnswering(sse, 'text/event-stream');
  return client.responses.stream({ model: 'coder', input: 'hi' }).finalResponse();
}
