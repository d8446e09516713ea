// What the simulated model reads from a request before it answers, in every API the sims speak:
// the tools offered (name, description, JSON schema), the tool choice, and the turn it answers (a
// user's words, or a tool's result). Pure readers over plain JSON; anything malformed reads as
// "no tools" or "no text" rather than failing (the servers' own validation answers elsewhere).

import { isRecord } from '#src/core/is-record.ts';

export interface OfferedTool {
  readonly name: string;
  readonly description: string;
  /** The tool's JSON schema for its arguments (an object schema, or {} when none was given). */
  readonly schema: Readonly<Record<string, unknown>>;
}

/** `auto` (the model decides), `none`, `required` (some tool), or one named tool. */
export type ToolChoice =
  | { readonly mode: 'auto' }
  | { readonly mode: 'none' }
  | { readonly mode: 'required' }
  | { readonly mode: 'named'; readonly name: string };

export interface Conversation {
  readonly tools: readonly OfferedTool[];
  readonly choice: ToolChoice;
  /** Whose turn the model answers: a user's message, a tool's result, or anything else. */
  readonly lastTurn: 'user' | 'tool_result' | 'other';
  /** The text of that last turn (the user's words or the tool's output), whitespace-collapsed. */
  readonly lastText: string;
  /** The name of the tool whose result ends the conversation, when known. */
  readonly lastToolName: string | undefined;
}

const AUTO: ToolChoice = { mode: 'auto' };

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value))
    return value
      .map(text)
      .filter((t) => t !== '')
      .join(' ');
  if (!isRecord(value)) return '';
  for (const key of ['text', 'content', 'output', 'input_text']) {
    if (key in value) return text(value[key]);
  }
  return '';
}

/** The words a person wrote: without the `<system-reminder>` blocks agents add to a user's turn, whitespace collapsed. */
function collapse(value: string): string {
  return value
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The last turn that is not a system or developer message (agents append those after the user's turn). */
function lastTurnOf(turns: readonly unknown[]): unknown {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    if (isRecord(turn) && (turn['role'] === 'system' || turn['role'] === 'developer')) continue;
    return turn;
  }
  return undefined;
}

function tool(name: unknown, description: unknown, schema: unknown): OfferedTool[] {
  if (typeof name !== 'string' || name === '') return [];
  return [{ name, description: typeof description === 'string' ? description : '', schema: isRecord(schema) ? schema : {} }];
}

/** OpenAI chat tools ({type:"function",function:{name,parameters}}), also Ollama's. */
function chatTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((entry) => {
    const fn = isRecord(entry) ? entry['function'] : undefined;
    return isRecord(fn) ? tool(fn['name'], fn['description'], fn['parameters']) : [];
  });
}

/** OpenAI's tool_choice on chat ({type:"function",function:{name}}) and Responses ({type:"function",name}). */
function openAiChoice(choice: unknown): ToolChoice {
  if (choice === 'none' || choice === 'required' || choice === 'auto') return { mode: choice };
  if (!isRecord(choice)) return AUTO;
  const fn = choice['function'];
  const name = isRecord(fn) ? fn['name'] : choice['name'];
  return typeof name === 'string' ? { mode: 'named', name } : AUTO;
}

function ending(lastTurn: Conversation['lastTurn'], lastText: string, lastToolName?: string) {
  return { lastTurn, lastText: collapse(lastText), lastToolName };
}

/** The name of the tool call `id` in the assistant messages before the result. */
function chatCallName(messages: readonly unknown[], id: unknown): string | undefined {
  for (const message of messages) {
    const calls = isRecord(message) ? message['tool_calls'] : undefined;
    if (!Array.isArray(calls)) continue;
    for (const call of calls) {
      const fn = isRecord(call) ? call['function'] : undefined;
      if (isRecord(call) && isRecord(fn) && (id === undefined || call['id'] === id) && typeof fn['name'] === 'string')
        return fn['name'];
    }
  }
  return undefined;
}

/** `/v1/chat/completions` and Ollama's `/api/chat`. */
export function chatConversation(body: Readonly<Record<string, unknown>>): Conversation {
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  const last = lastTurnOf(messages);
  const role = isRecord(last) ? last['role'] : undefined;
  const turn =
    role === 'tool'
      ? ending(
          'tool_result',
          text(isRecord(last) ? last['content'] : ''),
          chatCallName(messages, isRecord(last) ? last['tool_call_id'] : undefined),
        )
      : role === 'user'
        ? ending('user', text(isRecord(last) ? last['content'] : ''))
        : ending('other', '');
  return { tools: chatTools(body['tools']), choice: openAiChoice(body['tool_choice']), ...turn };
}

/** `/v1/responses`: `input` is a string (a user turn) or a list of items. */
export function responsesConversation(body: Readonly<Record<string, unknown>>): Conversation {
  const tools = Array.isArray(body['tools'])
    ? body['tools'].flatMap((entry) =>
        isRecord(entry) && entry['type'] === 'function' ? tool(entry['name'], entry['description'], entry['parameters']) : [],
      )
    : [];
  const input = body['input'];
  const items = Array.isArray(input) ? input : [];
  const last = lastTurnOf(items);
  let turn = ending('other', '');
  if (typeof input === 'string') turn = ending('user', input);
  else if (isRecord(last) && last['type'] === 'function_call_output') {
    const callId = last['call_id'];
    const call = items.find((item) => isRecord(item) && item['type'] === 'function_call' && item['call_id'] === callId);
    turn = ending(
      'tool_result',
      text(last['output']),
      isRecord(call) && typeof call['name'] === 'string' ? call['name'] : undefined,
    );
  } else if (isRecord(last) && last['role'] === 'user') turn = ending('user', text(last['content']));
  return { tools, choice: openAiChoice(body['tool_choice']), ...turn };
}

/** Anthropic's tool_choice: {type:"auto"|"any"|"none"|"tool", name}. */
function anthropicChoice(choice: unknown): ToolChoice {
  if (!isRecord(choice)) return AUTO;
  switch (choice['type']) {
    case 'none':
      return { mode: 'none' };
    case 'any':
      return { mode: 'required' };
    case 'tool':
      return typeof choice['name'] === 'string' ? { mode: 'named', name: choice['name'] } : AUTO;
    default:
      return AUTO;
  }
}

/** `/v1/messages`: a user message whose blocks carry `tool_result` answers a tool. */
export function anthropicConversation(body: Readonly<Record<string, unknown>>): Conversation {
  const tools = Array.isArray(body['tools'])
    ? body['tools'].flatMap((entry) => (isRecord(entry) ? tool(entry['name'], entry['description'], entry['input_schema']) : []))
    : [];
  const messages = Array.isArray(body['messages']) ? body['messages'] : [];
  const last = lastTurnOf(messages);
  let turn = ending('other', '');
  if (isRecord(last) && last['role'] === 'user') {
    const content = last['content'];
    const blocks = Array.isArray(content) ? content.filter(isRecord) : [];
    const results = blocks.filter((block) => block['type'] === 'tool_result');
    const result = results.at(-1);
    if (result === undefined) turn = ending('user', text(content));
    else {
      const useId = result['tool_use_id'];
      const use = messages
        .flatMap((m) => (isRecord(m) && Array.isArray(m['content']) ? m['content'] : []))
        .find((block) => isRecord(block) && block['type'] === 'tool_use' && block['id'] === useId);
      turn = ending(
        'tool_result',
        text(result['content']),
        isRecord(use) && typeof use['name'] === 'string' ? use['name'] : undefined,
      );
    }
  }
  return { tools, choice: anthropicChoice(body['tool_choice']), ...turn };
}

/** `/v1/completions` and `/api/generate`: a prompt, no tools. */
export function promptConversation(prompt: unknown): Conversation {
  return { tools: [], choice: AUTO, ...ending('user', text(prompt)) };
}
