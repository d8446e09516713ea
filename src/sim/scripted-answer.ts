// What the simulated model answers, decided before it generates: a tool call when tools are offered
// and the choice asks for one (auto: when the user just spoke; required/any: always; a named tool:
// that one; none: never), else a short text derived from the turn it answers. Deterministic: the
// same conversation gets the same answer, so tests can state it.

import type { Conversation, OfferedTool } from '#src/sim/conversation.ts';
import { seedFromText } from '#src/sim/seeded-random.ts';
import { toolArguments } from '#src/sim/tool-arguments.ts';
import type { AnswerMode } from '#src/sim/spec.ts';
import { tokenize } from '#src/sim/tokenizer.ts';

export interface ToolCallAnswer {
  readonly kind: 'tool_call';
  /** A stable id derived from the conversation (`call_` + hex): the same turn gets the same id. */
  readonly id: string;
  readonly name: string;
  /** The arguments as a JSON text (what the model generates, token by token). */
  readonly arguments: string;
}

export interface TextAnswer {
  readonly kind: 'text';
  readonly text: string;
}

export type ScriptedAnswer = TextAnswer | ToolCallAnswer;

const WORD = /[\p{L}\p{N}]{3,}/gu;
/** Words too common to say which tool is meant. */
const STOP_WORDS: ReadonlySet<string> = new Set([
  'the',
  'and',
  'for',
  'you',
  'your',
  'this',
  'that',
  'with',
  'here',
  'are',
  'what',
  'please',
  'from',
  'into',
  'use',
  'can',
]);

/** Lower-case words of three letters or more, a plural's `s` dropped ("lists files" ~ "list file"). */
function words(text: string): Set<string> {
  const found = new Set<string>();
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    if (STOP_WORDS.has(word)) continue;
    found.add(word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
  }
  return found;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The tool `auto` picks: one the user names, else the one whose name and description share the
 * most words with the user's turn (first on ties), so "list the files" reaches a shell or a lister.
 */
export function pickTool(tools: readonly OfferedTool[], userText: string): OfferedTool | undefined {
  const said = words(userText);
  let best: OfferedTool | undefined;
  let bestScore = -1;
  for (const tool of tools) {
    const named = new RegExp(`(^|[^\\w])${escapeRegExp(tool.name)}($|[^\\w])`, 'i').test(userText) ? 1000 : 0;
    const about = words(`${tool.name.replace(/[_-]/g, ' ')} ${tool.description}`);
    let shared = 0;
    for (const word of said) if (about.has(word)) shared++;
    if (named + shared > bestScore) {
      best = tool;
      bestScore = named + shared;
    }
  }
  return best;
}

/** The first `count` words of `text`, quoted for an answer. */
function excerpt(text: string, count: number): string {
  const parts = text.split(' ').filter((w) => w !== '');
  const head = parts.slice(0, count).join(' ');
  return parts.length > count ? `${head} …` : head;
}

function textAnswer(conversation: Conversation): TextAnswer {
  if (conversation.lastTurn === 'tool_result') {
    const tool = conversation.lastToolName === undefined ? 'The tool' : `The ${conversation.lastToolName} tool`;
    const output = conversation.lastText === '' ? 'nothing' : `"${excerpt(conversation.lastText, 12)}"`;
    return { kind: 'text', text: `${tool} answered ${output}. That is all I needed: the task is done.` };
  }
  if (conversation.lastText === '') return { kind: 'text', text: 'Hello! I am a simulated model, and all is well here.' };
  return { kind: 'text', text: `You said "${excerpt(conversation.lastText, 8)}". I am a simulated model; all is well here.` };
}

function callId(conversation: Conversation, name: string): string {
  const seed = seedFromText(`${name}\u0000${conversation.lastTurn}\u0000${conversation.lastText}`);
  return `call_${seed.toString(16).padStart(8, '0')}`;
}

/** The answer to `conversation`: a tool call or a text. */
export function scriptAnswer(conversation: Conversation): ScriptedAnswer {
  const { tools, choice } = conversation;
  let tool: OfferedTool | undefined;
  if (tools.length > 0) {
    if (choice.mode === 'named') tool = tools.find((t) => t.name === choice.name);
    else if (choice.mode === 'required') tool = pickTool(tools, conversation.lastText);
    else if (choice.mode === 'auto' && conversation.lastTurn === 'user') tool = pickTool(tools, conversation.lastText);
  }
  if (tool === undefined) return textAnswer(conversation);
  const args = JSON.stringify(toolArguments(tool.schema, conversation.lastText));
  return { kind: 'tool_call', id: callId(conversation, tool.name), name: tool.name, arguments: args };
}

/**
 * What the engine generates for `conversation`: a tool call's arguments, piece by piece; in
 * `natural` mode the text answer's pieces; in `fill` mode no pieces (the filler words, to the limit).
 */
export function answerPieces(
  conversation: Conversation,
  mode: AnswerMode,
): { readonly toolCall: ToolCallAnswer | undefined; readonly pieces: readonly string[] | undefined } {
  const answer = scriptAnswer(conversation);
  if (answer.kind === 'tool_call') return { toolCall: answer, pieces: tokenize(answer.arguments) };
  return { toolCall: undefined, pieces: mode === 'natural' ? tokenize(answer.text) : undefined };
}
