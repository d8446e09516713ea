// What the simulated model answers: a tool call as the tool choice asks, else a short text derived
// from the turn it answers; the same conversation always gets the same answer.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Conversation, OfferedTool, ToolChoice } from '#src/sim/conversation.ts';
import { answerPieces, pickTool, scriptAnswer } from '#src/sim/scripted-answer.ts';

const SHELL: OfferedTool = {
  name: 'shell',
  description: 'Runs a shell command and returns its output',
  schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};
const WEATHER: OfferedTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

function conversation(choice: ToolChoice, lastTurn: Conversation['lastTurn'], tools = [WEATHER, SHELL]): Conversation {
  return {
    tools,
    choice,
    lastTurn,
    lastText: lastTurn === 'tool_result' ? 'a.txt b.txt' : 'run a command',
    lastToolName: 'shell',
  };
}

test('the tool choice decides between a call and a text, per turn', () => {
  const cases: [ToolChoice, Conversation['lastTurn'], string | undefined][] = [
    [{ mode: 'auto' }, 'user', 'shell'],
    [{ mode: 'auto' }, 'tool_result', undefined],
    [{ mode: 'auto' }, 'other', undefined],
    [{ mode: 'none' }, 'user', undefined],
    [{ mode: 'required' }, 'user', 'shell'],
    // The tool result shares no word with a tool: the first one.
    [{ mode: 'required' }, 'tool_result', 'get_weather'],
    [{ mode: 'named', name: 'get_weather' }, 'user', 'get_weather'],
    [{ mode: 'named', name: 'get_weather' }, 'tool_result', 'get_weather'],
    [{ mode: 'named', name: 'absent' }, 'user', undefined],
  ];
  for (const [choice, turn, expected] of cases) {
    const answer = scriptAnswer(conversation(choice, turn));
    assert.equal(answer.kind === 'tool_call' ? answer.name : undefined, expected, `${JSON.stringify(choice)} after ${turn}`);
  }
  assert.equal(scriptAnswer(conversation({ mode: 'required' }, 'user', [])).kind, 'text');
});

test('a call carries valid JSON arguments and a stable id', () => {
  const answer = scriptAnswer(conversation({ mode: 'auto' }, 'user'));
  assert.equal(answer.kind, 'tool_call');
  if (answer.kind !== 'tool_call') return;
  assert.deepEqual(JSON.parse(answer.arguments), { command: 'ls' });
  assert.match(answer.id, /^call_[0-9a-f]{8}$/);
  assert.deepEqual(scriptAnswer(conversation({ mode: 'auto' }, 'user')), answer);
});

test('auto picks the tool the user names, else the one sharing most words, else the first', () => {
  assert.equal(pickTool([SHELL, WEATHER], 'what is the weather in Paris')?.name, 'get_weather');
  assert.equal(pickTool([WEATHER, SHELL], 'please use get_weather')?.name, 'get_weather');
  assert.equal(pickTool([WEATHER, SHELL], 'xyzzy')?.name, 'get_weather');
  assert.equal(pickTool([], 'anything'), undefined);
});

test('texts quote the turn they answer; natural mode generates them, fill mode leaves the filler', () => {
  const afterTool = scriptAnswer(conversation({ mode: 'auto' }, 'tool_result'));
  assert.deepEqual(afterTool, {
    kind: 'text',
    text: 'The shell tool answered "a.txt b.txt". That is all I needed: the task is done.',
  });
  const toUser = scriptAnswer({
    ...conversation({ mode: 'none' }, 'user'),
    lastText: 'one two three four five six seven eight nine',
  });
  assert.equal(
    toUser.kind === 'text' ? toUser.text : '',
    'You said "one two three four five six seven eight …". I am a simulated model; all is well here.',
  );
  const natural = answerPieces(conversation({ mode: 'none' }, 'user'), 'natural');
  assert.equal(natural.toolCall, undefined);
  assert.equal(natural.pieces?.join(''), 'You said "run a command". I am a simulated model; all is well here.');
  assert.deepEqual(answerPieces(conversation({ mode: 'none' }, 'user'), 'fill'), { toolCall: undefined, pieces: undefined });
  const call = answerPieces(conversation({ mode: 'auto' }, 'user'), 'fill');
  assert.equal(call.pieces?.join(''), '{"command":"ls"}');
});

test("an agent's request to list files goes to its shell, never to a tool that writes or spawns agents", () => {
  const tool = (name: string, description: string, required: string[]): OfferedTool => ({
    name,
    description,
    schema: { type: 'object', properties: Object.fromEntries(required.map((r) => [r, { type: 'string' }])), required },
  });
  const claudeCode = [
    tool('Agent', 'Launch a new agent to handle complex, multi-step tasks. Use it to list and find files.', [
      'description',
      'prompt',
    ]),
    tool('Edit', 'Performs exact string replacement in a file.', ['file_path', 'old_string', 'new_string']),
    tool('ListAgents', 'Lists agents you can SendMessage to.', []),
    tool('Read', 'Reads a file from the local filesystem.', ['file_path']),
    tool('Write', 'Writes a file to the local filesystem.', ['file_path', 'content']),
    tool('Bash', 'Executes a bash command and returns its output.', ['command']),
  ];
  assert.equal(pickTool(claudeCode, 'list the files here')?.name, 'Bash');
  assert.equal(pickTool(claudeCode, 'read the notes')?.name, 'Read');
  assert.equal(pickTool(claudeCode, 'please use Write')?.name, 'Write');
  assert.equal(pickTool(claudeCode.slice(1, 2), 'anything')?.name, 'Edit', 'the only tool offered');
});
