// Chat Completions streams → Anthropic's events (src/translate/messages/message-stream.ts): the
// block a delta goes to, the order, the closing usage, an in-stream error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageStream } from '#src/translate/messages/message-stream.ts';

const CONTEXT = { requestId: 'r1', model: 'm', nowSeconds: 1 };
const MEMO = { stopSequences: [], thinkingOff: false };

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });

function events(text: string): { event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((b) => b !== '')
    .map((block) => ({
      event: /^event: (.*)$/m.exec(block)?.[1] ?? '',
      data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Record<string, unknown>,
    }));
}

test('reasoning, then text, then two tool calls: four blocks in order, each closed before the next opens', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  const text = [
    chunk({ role: 'assistant', reasoning_content: 'let me ' }),
    chunk({ reasoning_content: 'think' }),
    chunk({ content: 'Ok.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'A', arguments: '{"x":' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'B', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
    JSON.stringify({
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 4 } },
    }),
    '[DONE]',
  ]
    .map((d) => s.event(d))
    .join('');
  const got = events(text);
  assert.deepEqual(
    got.map((e) => (e.event === 'content_block_delta' ? `delta:${(e.data.delta as { type: string }).type}` : e.event)),
    [
      'message_start',
      'content_block_start',
      'ping',
      'delta:thinking_delta',
      'delta:thinking_delta',
      'content_block_stop',
      'content_block_start',
      'delta:text_delta',
      'content_block_stop',
      'content_block_start',
      'delta:input_json_delta',
      'delta:input_json_delta',
      'content_block_stop',
      'content_block_start',
      'delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  const starts = got.filter((e) => e.event === 'content_block_start').map((e) => e.data);
  assert.deepEqual(
    starts.map((d) => [d.index, (d.content_block as { type: string }).type]),
    [
      [0, 'thinking'],
      [1, 'text'],
      [2, 'tool_use'],
      [3, 'tool_use'],
    ],
  );
  assert.deepEqual(starts[2]?.content_block, { type: 'tool_use', id: 'call_a', name: 'A', input: {} });
  const delta = got.find((e) => e.event === 'message_delta')?.data;
  assert.deepEqual(delta, {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { input_tokens: 8, output_tokens: 5, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
  });
  assert.equal(s.end(), '');
});

test('vLLM’s `reasoning` deltas are thinking too, and none shows when thinking is off', () => {
  const on = new MessageStream(MEMO, CONTEXT);
  assert.match(on.event(chunk({ reasoning: 'hm' })), /thinking_delta/);
  const off = new MessageStream({ ...MEMO, thinkingOff: true }, CONTEXT);
  assert.doesNotMatch(off.event(chunk({ reasoning: 'hm' })), /thinking/);
});

test('a stream that ends without [DONE] or usage is still closed: end_turn, zero usage', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  const got = events(s.event(chunk({ content: 'hi' })) + s.end());
  assert.deepEqual(
    got.slice(-3).map((e) => e.event),
    ['content_block_stop', 'message_delta', 'message_stop'],
  );
  assert.equal((got.at(-2)?.data.delta as { stop_reason: string }).stop_reason, 'end_turn');
});

test('a length finish is max_tokens', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  const got = events(s.event(chunk({ content: 'hi' }, 'length')) + s.event('[DONE]'));
  assert.equal((got.at(-2)?.data.delta as { stop_reason: string }).stop_reason, 'max_tokens');
});

test('a node’s in-stream error is an Anthropic error event, and the stream says nothing more', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  s.event(chunk({ content: 'hi' }));
  const got = events(s.event(JSON.stringify({ error: { message: 'out of memory', code: 500 } })));
  assert.deepEqual(got, [{ event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'out of memory' } } }]);
  assert.equal(s.event('[DONE]'), '');
  assert.equal(s.end(), '');
});

test('fail() after bytes: one error event; nothing before the message started is invented', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  s.event(chunk({ content: 'partial' }));
  assert.deepEqual(events(s.fail('cut')), [
    { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'cut' } } },
  ]);
});

test('data that is not JSON is skipped', () => {
  const s = new MessageStream(MEMO, CONTEXT);
  assert.equal(s.event(': keep-alive'), '');
});
