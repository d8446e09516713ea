// Pure: the text pieces of an Anthropic Messages body (`/v1/messages`, `/v1/messages/count_tokens`)
// a tokenizer would see, for the prompt sizing of prompt-size.ts: `system` (a string or text
// blocks), every message's content (a string, or blocks: text, thinking, a tool call's name and
// input, a tool result's content), and the tool definitions. Images are not text and not counted,
// as on the OpenAI routes.

import { isRecord } from '#src/core/is-record.ts';

/** One content value (a string or an array of blocks) into `pieces`. */
function collectBlocks(content: unknown, pieces: { push(piece: string): unknown }): void {
  if (typeof content === 'string') {
    pieces.push(content);
    return;
  }
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (typeof block === 'string') pieces.push(block);
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') pieces.push(block.text);
    if (typeof block.thinking === 'string') pieces.push(block.thinking);
    if (typeof block.name === 'string') pieces.push(block.name);
    if (block.input !== undefined) pieces.push(JSON.stringify(block.input));
    if (block.content !== undefined) collectBlocks(block.content, pieces);
  }
}

/** The pieces and the number of messages (the system prompt counts as one, as a chat template renders it). */
export function anthropicPromptPieces(json: Readonly<Record<string, unknown>>, pieces: { push(piece: string): unknown }): number {
  let messages = 0;
  if (json.system !== undefined && json.system !== null && json.system !== '') {
    collectBlocks(json.system, pieces);
    messages += 1;
  }
  if (Array.isArray(json.messages)) {
    for (const message of json.messages) {
      if (!isRecord(message)) continue;
      collectBlocks(message.content, pieces);
      messages += 1;
    }
  }
  if (Array.isArray(json.tools)) pieces.push(JSON.stringify(json.tools));
  return messages;
}
