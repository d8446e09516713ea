// A Responses request → the chat request a node answers. Carried: instructions and input (as
// messages), tools and tool_choice, parallel_tool_calls, max_output_tokens (as max_tokens),
// temperature, top_p, reasoning.effort (as reasoning_effort), text.format (as response_format),
// user, safety_identifier and prompt_cache_key; a stream asks the node for its usage. Refused,
// by name: what needs OpenAI's store or its servers (previous_response_id, conversation, prompt,
// background). Not carried (docs/protocols-endpoints.md): store (a node keeps nothing; the answer
// says `store: false`), include, metadata, truncation, top_logprobs, max_tool_calls, service_tier,
// text.verbosity, reasoning.summary.

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, TranslatedRequest, TranslationContext, Untranslatable } from '#src/translate/translation.ts';
import { chatMessages } from '#src/translate/responses/input-messages.ts';
import type { ResponsesMemo } from '#src/translate/responses/memo.ts';
import { chatToolChoice, chatTools } from '#src/translate/responses/tool-list.ts';
import { isUntranslatable, untranslatable } from '#src/translate/untranslatable.ts';

/** Fields that need what only OpenAI's servers have: refused rather than answered wrong. */
const NEEDS_OPENAI: readonly (readonly [string, string])[] = [
  [
    'previous_response_id',
    'a Chat Completions node keeps no responses: send the whole conversation in input (with store: false, as Codex does)',
  ],
  ['conversation', 'a Chat Completions node keeps no conversations: send the whole conversation in input'],
  ['prompt', 'a stored prompt template lives on OpenAI; a Chat Completions node cannot read it: send instructions'],
];

/** Copies `key` of `from` into `to` (renamed `as`) when it is of the type `accepts` allows. */
function carry(
  from: Readonly<Record<string, unknown>>,
  to: JsonObject,
  key: string,
  accepts: (v: unknown) => boolean,
  as = key,
): void {
  if (accepts(from[key])) to[as] = from[key];
}
const isNumber = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value);
const isText = (value: unknown): boolean => typeof value === 'string' && value !== '';

/** `text.format` → chat `response_format` (undefined: plain text). */
function responseFormat(text: unknown): JsonObject | undefined | Untranslatable {
  if (!isRecord(text) || !isRecord(text['format'])) return undefined;
  const format = text['format'];
  switch (format['type']) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      if (!isRecord(format['schema'])) return untranslatable('text.format.schema', 'a json_schema format needs a schema');
      const schema: JsonObject = {
        name: typeof format['name'] === 'string' ? format['name'] : 'response',
        schema: format['schema'],
      };
      carry(format, schema, 'description', (v) => typeof v === 'string');
      carry(format, schema, 'strict', (v) => typeof v === 'boolean');
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      return untranslatable(
        'text.format.type',
        `a text format of type '${String(format['type'])}' has no Chat Completions equivalent`,
      );
  }
}

/** The request fields a `response` object repeats, as the client asked them (defaults as OpenAI answers them). */
function echoOf(body: JsonObject): JsonObject {
  const asked = (key: string, fallback: unknown): unknown => (body[key] === undefined ? fallback : body[key]);
  const echo: JsonObject = {
    instructions: asked('instructions', null),
    max_output_tokens: asked('max_output_tokens', null),
    parallel_tool_calls: asked('parallel_tool_calls', true),
    previous_response_id: null,
    reasoning: asked('reasoning', { effort: null, summary: null }),
    store: false,
    temperature: asked('temperature', null),
    text: asked('text', { format: { type: 'text' } }),
    tool_choice: asked('tool_choice', 'auto'),
    tools: asked('tools', []),
    top_p: asked('top_p', null),
    truncation: asked('truncation', 'disabled'),
    metadata: asked('metadata', {}),
  };
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key']) if (body[key] !== undefined) echo[key] = body[key];
  return echo;
}

/** The client's Responses body → the node's chat body, or the field that cannot be carried. */
export function chatRequest(body: JsonObject, context: TranslationContext): TranslatedRequest | Untranslatable {
  for (const [field, why] of NEEDS_OPENAI) {
    if (body[field] !== undefined && body[field] !== null) return untranslatable(field, why);
  }
  if (body['background'] === true)
    return untranslatable('background', 'a Chat Completions node answers in the request: background responses need OpenAI');
  const messages = chatMessages(body['instructions'], body['input']);
  if (isUntranslatable(messages)) return messages;
  const offered = chatTools(body['tools']);
  if (isUntranslatable(offered)) return offered;
  const choice = chatToolChoice(body['tool_choice'], offered);
  if (isUntranslatable(choice)) return choice;
  const format = responseFormat(body['text']);
  if (isUntranslatable(format)) return format;

  const stream = body['stream'] === true;
  const chat: JsonObject = { model: typeof body['model'] === 'string' ? body['model'] : context.model, messages };
  if (choice.tools.length > 0) {
    chat['tools'] = choice.tools;
    if (choice.toolChoice !== undefined) chat['tool_choice'] = choice.toolChoice;
    carry(body, chat, 'parallel_tool_calls', (v) => typeof v === 'boolean');
  }
  carry(body, chat, 'max_output_tokens', isNumber, 'max_tokens');
  carry(body, chat, 'temperature', isNumber);
  carry(body, chat, 'top_p', isNumber);
  if (isRecord(body['reasoning'])) carry(body['reasoning'], chat, 'effort', isText, 'reasoning_effort');
  if (format !== undefined) chat['response_format'] = format;
  for (const key of ['user', 'safety_identifier', 'prompt_cache_key']) carry(body, chat, key, isText);
  if (stream) {
    chat['stream'] = true;
    chat['stream_options'] = { include_usage: true };
  }
  const memo: ResponsesMemo = { tools: offered.names, echo: echoOf(body) };
  return { kind: 'translated', body: chat, stream, memo };
}
