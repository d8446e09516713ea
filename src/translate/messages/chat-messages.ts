// Anthropic's `messages` → OpenAI chat messages, in order. A system turn (the API's newer
// mid-conversation system messages, which Claude Code sends) is a system message in its place. A user turn's tool_result blocks become
// `tool` messages (one per result, in the order given, right after the assistant turn that called
// them, as OpenAI requires), then the rest of the turn as one user message; an assistant turn's
// text is its content, its tool_use blocks its tool_calls (input as JSON arguments), its thinking
// its `reasoning_content`. Dropped: cache_control, citations, redacted_thinking (opaque to any
// other model). What no Chat Completions node can read is refused, naming the block.

import { isRecord } from '#src/core/is-record.ts';
import { CannotCarry } from '../untranslatable.ts';
import { imageUrlPart } from './image-source.ts';

type Json = Record<string, unknown>;

/** Marks a tool result the client flagged `is_error` (OpenAI's tool message has no such field). */
export const TOOL_ERROR_PREFIX = 'Error: ';

export function chatMessages(messages: unknown): Json[] {
  if (!Array.isArray(messages)) throw new CannotCarry('messages', 'must be an array');
  const out: Json[] = [];
  messages.forEach((message: unknown, i) => {
    const field = `messages[${i}]`;
    if (!isRecord(message)) throw new CannotCarry(field, 'must be an object');
    if (message.role === 'user') out.push(...userTurn(message.content, `${field}.content`));
    else if (message.role === 'assistant') out.push(...assistantTurn(message.content, `${field}.content`));
    else if (message.role === 'system') out.push(systemTurn(message.content, `${field}.content`));
    else throw new CannotCarry(`${field}.role`, `must be user, assistant or system, not ${JSON.stringify(message.role)}`);
  });
  return out;
}

function blocksOf(content: unknown, field: string): readonly Readonly<Json>[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new CannotCarry(field, 'must be a string or an array of content blocks');
  return content.map((block: unknown, j) => {
    if (!isRecord(block) || typeof block.type !== 'string') throw new CannotCarry(`${field}[${j}]`, 'must be a content block');
    return block;
  });
}

/** A system turn inside the conversation (Claude Code's environment notes): a system message in its place. */
function systemTurn(content: unknown, field: string): Json {
  const texts = blocksOf(content, field).map((block, j) => {
    if (block.type !== 'text') throw new CannotCarry(`${field}[${j}].type`, 'a system turn carries text blocks only');
    return textOf(block, `${field}[${j}]`);
  });
  return { role: 'system', content: texts.join('\n\n') };
}

function userTurn(content: unknown, field: string): Json[] {
  const tools: Json[] = [];
  const parts: Json[] = [];
  blocksOf(content, field).forEach((block, j) => {
    const at = `${field}[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: textOf(block, at) });
        break;
      case 'image':
        parts.push(imageUrlPart(block, at));
        break;
      case 'document':
        parts.push({ type: 'text', text: documentText(block, at) });
        break;
      case 'tool_result':
        tools.push(toolMessage(block, at));
        break;
      default:
        throw new CannotCarry(`${at}.type`, `a ${JSON.stringify(block.type)} block in a user turn cannot be carried`);
    }
  });
  if (parts.length === 0) return tools;
  const onlyText = parts.every((p) => p.type === 'text');
  // Plain text as a string: every Chat Completions server reads that.
  const userContent = onlyText ? parts.map((p) => p.text as string).join('\n\n') : parts;
  return [...tools, { role: 'user', content: userContent }];
}

function assistantTurn(content: unknown, field: string): Json[] {
  const texts: string[] = [];
  const calls: Json[] = [];
  let reasoning = '';
  blocksOf(content, field).forEach((block, j) => {
    const at = `${field}[${j}]`;
    switch (block.type) {
      case 'text':
        texts.push(textOf(block, at));
        break;
      case 'thinking':
        if (typeof block.thinking === 'string') reasoning += block.thinking;
        break;
      case 'redacted_thinking':
        break;
      case 'tool_use':
        calls.push(toolCall(block, at));
        break;
      default:
        throw new CannotCarry(`${at}.type`, `a ${JSON.stringify(block.type)} block in an assistant turn cannot be carried`);
    }
  });
  if (texts.length === 0 && calls.length === 0 && reasoning === '') return [];
  const message: Json = { role: 'assistant', content: texts.length === 0 ? null : texts.join('') };
  if (calls.length > 0) message.tool_calls = calls;
  if (reasoning !== '') message.reasoning_content = reasoning;
  return [message];
}

function textOf(block: Readonly<Json>, field: string): string {
  if (typeof block.text !== 'string') throw new CannotCarry(`${field}.text`, 'must be a string');
  return block.text;
}

/** A plain-text document (`source.type: "text"`) is its text; a PDF or a file needs Anthropic's reader. */
function documentText(block: Readonly<Json>, field: string): string {
  const source = block.source;
  if (isRecord(source) && source.type === 'text' && typeof source.data === 'string') {
    return typeof block.title === 'string' ? `${block.title}\n\n${source.data}` : source.data;
  }
  throw new CannotCarry(`${field}.source`, 'only a plain-text document can be carried to a Chat Completions node');
}

function toolCall(block: Readonly<Json>, field: string): Json {
  if (typeof block.id !== 'string') throw new CannotCarry(`${field}.id`, 'must be a string');
  if (typeof block.name !== 'string') throw new CannotCarry(`${field}.name`, 'must be a string');
  const input = block.input ?? {};
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(input) } };
}

function toolMessage(block: Readonly<Json>, field: string): Json {
  if (typeof block.tool_use_id !== 'string') throw new CannotCarry(`${field}.tool_use_id`, 'must be a string');
  const flagged = block.is_error === true ? TOOL_ERROR_PREFIX : '';
  const content = block.content;
  if (content === undefined || content === null) return { role: 'tool', tool_call_id: block.tool_use_id, content: flagged };
  if (typeof content === 'string') return { role: 'tool', tool_call_id: block.tool_use_id, content: flagged + content };
  const parts = blocksOf(content, `${field}.content`).map((part, k) => {
    const at = `${field}.content[${k}]`;
    if (part.type === 'text') return { type: 'text', text: textOf(part, at) };
    if (part.type === 'image') return imageUrlPart(part, at);
    if (part.type === 'document') return { type: 'text', text: documentText(part, at) };
    throw new CannotCarry(`${at}.type`, `a ${JSON.stringify(part.type)} block in a tool result cannot be carried`);
  });
  if (parts.every((p) => p.type === 'text')) {
    return { role: 'tool', tool_call_id: block.tool_use_id, content: flagged + parts.map((p) => p.text as string).join('\n\n') };
  }
  const withFlag = flagged === '' ? parts : [{ type: 'text', text: flagged.trim() }, ...parts];
  return { role: 'tool', tool_call_id: block.tool_use_id, content: withFlag };
}
