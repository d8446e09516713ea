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

/** Words of a request a shell answers ("list the files", "run the tests", "show the folder"). */
const SHELL_WORDS: ReadonlySet<string> = new Set([
  'list',
  'run',
  'show',
  'find',
  'execute',
  'file',
  'directory',
  'folder',
  'command',
  'test',
]);
/** Tool names that change things: picked by `auto` only when the user names them (or nothing else is offered). */
const CHANGES = /write|edit|delete|remove|patch|kill|move|rename|create|notebook|schedule|cron|workflow|agent|task|message/i;

function countShared(said: ReadonlySet<string>, about: ReadonlySet<string>): number {
  let shared = 0;
  for (const word of said) if (about.has(word)) shared++;
  return shared;
}

/** A tool whose required arguments name a shell command (Claude Code's Bash, Codex's shell, OpenCode's bash). */
function isShell(tool: OfferedTool): boolean {
  const required = tool.schema['required'];
  return Array.isArray(required) && required.some((name) => name === 'command' || name === 'cmd');
}

/**
 * The tool `auto` picks, by score (first on ties): a tool the user names outright; a shell for a
 * request a shell answers; then the words the request shares with the tool's name and first
 * sentence (ten points each) and the rest of its description (one each). Tools that change things
 * (write, edit, delete, spawn agents…) lose 100 points, so a simulated model never edits a user's
 * files unasked.
 */
export function pickTool(tools: readonly OfferedTool[], userText: string): OfferedTool | undefined {
  const said = words(userText);
  const wantsShell = countShared(said, SHELL_WORDS) > 0;
  let best: OfferedTool | undefined;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const tool of tools) {
    const named = new RegExp(`(^|[^\\w])${escapeRegExp(tool.name)}($|[^\\w])`, 'i').test(userText) ? 1000 : 0;
    const name = tool.name.replace(/[_-]/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2');
    const [summary = '', ...rest] = tool.description.split(/(?<=[.!?])\s|\n/);
    const score =
      named +
      (wantsShell && isShell(tool) ? 50 : 0) +
      (CHANGES.test(tool.name) ? -100 : 0) +
      10 * countShared(said, words(`${name} ${summary}`)) +
      countShared(said, words(rest.join(' ')));
    if (score > bestScore) {
      best = tool;
      bestScore = score;
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
