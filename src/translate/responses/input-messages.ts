// A Responses request's `instructions` and `input` → chat `messages`. The items of one assistant
// turn (a `reasoning` item, a `message`, its `function_call`s and `custom_tool_call`s) become one
// assistant message with `tool_calls`; each call's output becomes a `tool` message. Instructions and
// the system/developer messages that open the input become one system message (chat templates read
// the system prompt at the start); a later one stays a system message where it was. Reasoning the
// client sends back is carried as the assistant's `reasoning_content` (templates that keep thinking
// read it) when it is readable text; encrypted reasoning, which only OpenAI can read, is dropped, as
// are `web_search_call` records (a chat node ran no search). An image in a tool's output follows the
// tool messages as a user message (a chat tool message holds text only).

import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, Untranslatable } from '#src/translate/translation.ts';
import { NAMESPACE_SEPARATOR } from '#src/translate/responses/tool-list.ts';
import { CUSTOM_INPUT } from '#src/translate/responses/memo.ts';
import { chatContent, imagePart, messageContent, partText, type ChatContent } from '#src/translate/responses/content-parts.ts';
import { isUntranslatable, untranslatable } from '#src/translate/untranslatable.ts';

type Item = Readonly<Record<string, unknown>>;

/** The assistant turn being gathered: its reasoning, its words, its calls. */
interface AssistantTurn {
  reasoning: string[];
  text: string[];
  calls: JsonObject[];
}

const emptyTurn = (): AssistantTurn => ({ reasoning: [], text: [], calls: [] });

/** The readable text of a reasoning item: its `reasoning_text` content, else its summary (encrypted content is not readable). */
function reasoningText(item: Item): string {
  const texts = (list: unknown): string[] =>
    Array.isArray(list) ? list.flatMap((part) => (isRecord(part) && typeof part['text'] === 'string' ? [part['text']] : [])) : [];
  const content = texts(item['content']);
  return (content.length > 0 ? content : texts(item['summary'])).join('\n');
}

/** A tool output (`output`: a string, or input_text / input_image parts) → the tool message's text and the images that follow it. */
function toolOutput(output: unknown, field: string): { text: string; images: JsonObject[] } | Untranslatable {
  if (typeof output === 'string') return { text: output, images: [] };
  if (!Array.isArray(output)) return untranslatable(field, 'a tool output must be a string or a list of parts');
  const texts: string[] = [];
  const images: JsonObject[] = [];
  for (const [index, part] of output.entries()) {
    const at = `${field}[${index}]`;
    if (!isRecord(part)) return untranslatable(at, 'a tool output part must be an object');
    const text = partText(part);
    if (text !== undefined) texts.push(text);
    else if (part['type'] === 'input_image') {
      const image = imagePart(part, at);
      if (isUntranslatable(image)) return image;
      images.push(image);
    } else
      return untranslatable(
        `${at}.type`,
        `a tool output part of type '${String(part['type'])}' has no Chat Completions equivalent`,
      );
  }
  return { text: texts.join('\n'), images };
}

function callId(item: Item, field: string): string | Untranslatable {
  const id = item['call_id'];
  return typeof id === 'string' && id !== ''
    ? id
    : untranslatable(`${field}.call_id`, 'a tool call and its output need a call_id');
}

/** Builds the chat messages item by item. */
class MessageList {
  readonly messages: JsonObject[] = [];
  #turn: AssistantTurn = emptyTurn();
  /** Images from tool outputs, owed as a user message once the run of tool messages ends. */
  #images: JsonObject[] = [];

  system(content: string): void {
    this.#flush();
    this.messages.push({ role: 'system', content });
  }

  user(content: ChatContent): void {
    this.#flush();
    this.messages.push({ role: 'user', content });
  }

  assistantText(text: string): void {
    if (this.#turn.calls.length > 0) this.#flushTurn();
    this.#flushImages();
    this.#turn.text.push(text);
  }

  reasoning(text: string): void {
    if (this.#turn.text.length > 0 || this.#turn.calls.length > 0) this.#flushTurn();
    this.#flushImages();
    this.#turn.reasoning.push(text);
  }

  call(id: string, name: string, argumentsText: string): void {
    this.#flushImages();
    this.#turn.calls.push({ id, type: 'function', function: { name, arguments: argumentsText } });
  }

  toolResult(id: string, text: string, images: readonly JsonObject[]): void {
    this.#flushTurn();
    this.messages.push({ role: 'tool', tool_call_id: id, content: text });
    this.#images.push(...images);
  }

  end(): JsonObject[] {
    this.#flush();
    return this.messages;
  }

  #flush(): void {
    this.#flushTurn();
    this.#flushImages();
  }

  #flushTurn(): void {
    const turn = this.#turn;
    if (turn.reasoning.length === 0 && turn.text.length === 0 && turn.calls.length === 0) return;
    const message: JsonObject = { role: 'assistant', content: turn.text.length > 0 ? turn.text.join('\n') : null };
    if (turn.calls.length > 0) message['tool_calls'] = turn.calls;
    if (turn.reasoning.length > 0) message['reasoning_content'] = turn.reasoning.join('\n');
    this.messages.push(message);
    this.#turn = emptyTurn();
  }

  #flushImages(): void {
    if (this.#images.length === 0) return;
    this.messages.push({ role: 'user', content: chatContent(this.#images) });
    this.#images = [];
  }
}

/** One `message` item (or a bare `{role, content}`) into the list. */
function addMessage(list: MessageList, item: Item, field: string): Untranslatable | undefined {
  const role = item['role'];
  const content = messageContent(item['content'], `${field}.content`);
  if (isUntranslatable(content)) return content;
  if (role === 'user') list.user(content);
  else if (role === 'system' || role === 'developer') {
    if (typeof content !== 'string') return untranslatable(`${field}.content`, `a ${role} message holds text only`);
    list.system(content);
  } else if (role === 'assistant') {
    if (typeof content !== 'string') return untranslatable(`${field}.content`, 'an assistant message holds text only');
    if (content !== '') list.assistantText(content);
  } else
    return untranslatable(`${field}.role`, `a message role must be user, assistant, system or developer, not '${String(role)}'`);
  return undefined;
}

/** One input item into the list, or why it cannot be carried. */
function addItem(list: MessageList, item: Item, field: string): Untranslatable | undefined {
  const type = item['type'] ?? (item['role'] === undefined ? undefined : 'message');
  switch (type) {
    case 'message':
      return addMessage(list, item, field);
    case 'reasoning': {
      const text = reasoningText(item);
      if (text !== '') list.reasoning(text);
      return undefined;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const id = callId(item, field);
      if (isUntranslatable(id)) return id;
      const name = item['name'];
      if (typeof name !== 'string' || name === '') return untranslatable(`${field}.name`, 'a tool call needs a name');
      const namespace = item['namespace'];
      const chatName = typeof namespace === 'string' && namespace !== '' ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
      if (type === 'custom_tool_call') {
        const input = typeof item['input'] === 'string' ? item['input'] : '';
        list.call(id, chatName, JSON.stringify({ [CUSTOM_INPUT]: input }));
      } else list.call(id, chatName, typeof item['arguments'] === 'string' ? item['arguments'] : '{}');
      return undefined;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const id = callId(item, field);
      if (isUntranslatable(id)) return id;
      const output = toolOutput(item['output'], `${field}.output`);
      if (isUntranslatable(output)) return output;
      list.toolResult(id, output.text, output.images);
      return undefined;
    }
    case 'web_search_call':
      return undefined;
    case 'item_reference':
      return untranslatable(
        `${field}.type`,
        'an item_reference names an item stored by OpenAI; a Chat Completions node keeps nothing: send the item itself',
      );
    default:
      return untranslatable(`${field}.type`, `an input item of type '${String(type)}' has no Chat Completions equivalent`);
  }
}

/** Merges the system messages that open the conversation into one (chat templates read one system prompt, first). */
function mergeLeadingSystem(messages: readonly JsonObject[]): JsonObject[] {
  let count = 0;
  while (count < messages.length && messages[count]?.['role'] === 'system') count++;
  if (count < 2) return [...messages];
  const content = messages
    .slice(0, count)
    .map((message) => String(message['content']))
    .join('\n\n');
  return [{ role: 'system', content }, ...messages.slice(count)];
}

/** `instructions` and `input` → chat messages, or the field that cannot be carried. */
export function chatMessages(instructions: unknown, input: unknown): JsonObject[] | Untranslatable {
  const list = new MessageList();
  if (typeof instructions === 'string') {
    if (instructions !== '') list.system(instructions);
  } else if (instructions !== undefined && instructions !== null)
    return untranslatable('instructions', 'instructions must be a string');
  if (typeof input === 'string') list.user(input);
  else if (Array.isArray(input)) {
    for (const [index, item] of input.entries()) {
      const field = `input[${index}]`;
      if (!isRecord(item)) return untranslatable(field, 'an input item must be an object');
      const refused = addItem(list, item, field);
      if (refused !== undefined) return refused;
    }
  } else if (input !== undefined && input !== null) return untranslatable('input', 'input must be a string or a list of items');
  const messages = mergeLeadingSystem(list.end());
  if (!messages.some((message) => message['role'] !== 'system'))
    return untranslatable('input', 'the request has no input for the model to answer');
  return messages;
}
