// Chat Completions answers → Anthropic messages (src/translate/messages/message-answer.ts), its stop
// reasons, usage and errors, one table row per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicError, anthropicErrorType, nodeErrorMessage } from '#src/translate/messages/error-shape.ts';
import { messageAnswer, toolInput } from '#src/translate/messages/message-answer.ts';
import { messageUsage } from '#src/translate/messages/message-usage.ts';
import { stopReason } from '#src/translate/messages/stop-reason.ts';

const CONTEXT = { requestId: 'abc-123', model: 'claude-local', nowSeconds: 1 };
const MEMO = { stopSequences: ['END'], thinkingOff: false };

const answer = (message: Record<string, unknown>, finish = 'stop', extra: Record<string, unknown> = {}) => ({
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, ...extra }],
  usage: { prompt_tokens: 50, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 30 } },
});

test('answer: reasoning, text and tool calls become thinking, text and tool_use blocks in that order', () => {
  const out = messageAnswer(
    answer(
      {
        reasoning_content: 'think',
        content: 'Sure.',
        tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
      },
      'tool_calls',
    ),
    MEMO,
    CONTEXT,
  );
  assert.deepEqual(out, {
    id: 'msg_abc-123',
    type: 'message',
    role: 'assistant',
    model: 'claude-local',
    content: [
      { type: 'thinking', thinking: 'think', signature: '' },
      { type: 'text', text: 'Sure.' },
      { type: 'tool_use', id: 'call_9', name: 'Bash', input: { command: 'ls' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 30, cache_creation_input_tokens: 0 },
  });
});

test('answer: vLLM’s `reasoning` is thinking too; none when the client turned thinking off', () => {
  const withReasoning = answer({ reasoning: 'r', content: 'x' });
  assert.equal((messageAnswer(withReasoning, MEMO, CONTEXT).content as { type: string }[])[0]?.type, 'thinking');
  assert.deepEqual(
    (messageAnswer(withReasoning, { ...MEMO, thinkingOff: true }, CONTEXT).content as { type: string }[]).map((b) => b.type),
    ['text'],
  );
});

test('answer: tool calls with finish_reason stop still say tool_use', () => {
  const out = messageAnswer(
    answer({ content: null, tool_calls: [{ id: 'c', function: { name: 'T', arguments: '' } }] }),
    MEMO,
    CONTEXT,
  );
  assert.equal(out.stop_reason, 'tool_use');
  assert.deepEqual((out.content as unknown[])[0], { type: 'tool_use', id: 'c', name: 'T', input: {} });
});

const STOPS: readonly [string, unknown, string, string | null][] = [
  ['stop', null, 'end_turn', null],
  ['stop', 'END', 'stop_sequence', 'END'],
  ['stop', 'OTHER', 'end_turn', null],
  ['length', null, 'max_tokens', null],
  ['tool_calls', null, 'tool_use', null],
  ['function_call', null, 'tool_use', null],
  ['content_filter', null, 'refusal', null],
];
for (const [finish, matched, reason, sequence] of STOPS) {
  test(`stop reason: ${finish}${matched === null ? '' : ` matching ${String(matched)}`} → ${reason}`, () => {
    assert.deepEqual(stopReason(finish, matched, MEMO), { stop_reason: reason, stop_sequence: sequence });
  });
}

test('usage: cached prompt tokens are cache reads, not input; a missing usage is zeros', () => {
  assert.deepEqual(messageUsage({ prompt_tokens: 10, completion_tokens: 3 }), {
    input_tokens: 10,
    output_tokens: 3,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  });
  assert.deepEqual(messageUsage(undefined), {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  });
});

test('tool input: arguments that are not a JSON object are kept, never lost', () => {
  assert.deepEqual(toolInput('{"a":1}'), { a: 1 });
  assert.deepEqual(toolInput('[1]'), { arguments: [1] });
  assert.deepEqual(toolInput('{cut'), { arguments: '{cut' });
  assert.deepEqual(toolInput(undefined), {});
});

const ERROR_TYPES: readonly [number, string][] = [
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [503, 'overloaded_error'],
  [529, 'overloaded_error'],
];
for (const [status, type] of ERROR_TYPES) {
  test(`error: ${status} is ${type}`, () => assert.equal(anthropicErrorType(status), type));
}

test('error: the node’s own words, from OpenAI’s shape, FastAPI’s detail or plain text', () => {
  assert.equal(nodeErrorMessage(400, { error: { message: 'too long', type: 'x' } }), 'too long');
  assert.equal(nodeErrorMessage(404, { detail: 'Not Found' }), 'Not Found');
  assert.equal(nodeErrorMessage(500, 'boom'), 'boom');
  assert.equal(nodeErrorMessage(502, undefined), 'the node answered 502');
  assert.deepEqual(anthropicError(400, 'x'), { type: 'error', error: { type: 'invalid_request_error', message: 'x' } });
});
