// A node's whole chat completion → the client's `response`: the output items in a Responses
// model's order, the status, the usage, ids from the request id; and the openai SDK reads it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { responseFromChat } from '#src/translate/responses/chat-answer.ts';
import { chatRequest } from '#src/translate/responses/chat-request.ts';
import { responsesMemo, type ResponsesMemo } from '#src/translate/responses/memo.ts';
import type { JsonObject } from '#src/translate/translation.ts';
import { CONTEXT, USAGE, chatCompletion, clientAnswering } from '#test/unit/translate/responses/chat-stream.ts';

const EMPTY: ResponsesMemo = { tools: {}, echo: {} };

function memoFor(body: JsonObject): ResponsesMemo {
  const translated = chatRequest({ model: 'coder', input: 'hi', ...body }, CONTEXT);
  assert.equal(translated.kind, 'translated');
  return responsesMemo(translated.kind === 'translated' ? translated.memo : undefined);
}

test('a text answer is one completed message with output_text, ids from the request id, the client model and clock', () => {
  const response = responseFromChat(chatCompletion({ text: ['Hello', ' there'], finish: 'stop', usage: USAGE }), EMPTY, CONTEXT);
  assert.equal(response['id'], 'resp_req7f3a');
  assert.equal(response['object'], 'response');
  assert.equal(response['created_at'], CONTEXT.nowSeconds);
  assert.equal(response['model'], 'coder');
  assert.equal(response['status'], 'completed');
  assert.equal(response['incomplete_details'], null);
  assert.deepEqual(response['output'], [
    {
      type: 'message',
      id: 'msg_req7f3a_0',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello there', annotations: [], logprobs: [] }],
    },
  ]);
});

test('usage: prompt → input, completion → output, cached and reasoning tokens in their details', () => {
  const response = responseFromChat(chatCompletion({ text: ['x'], finish: 'stop', usage: USAGE }), EMPTY, CONTEXT);
  assert.deepEqual(response['usage'], {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 100 },
    output_tokens: 30,
    output_tokens_details: { reasoning_tokens: 12 },
    total_tokens: 150,
  });
  const bare = responseFromChat(
    chatCompletion({ text: ['x'], finish: 'stop', usage: { prompt_tokens: 3, completion_tokens: 2 } }),
    EMPTY,
    CONTEXT,
  );
  assert.deepEqual(bare['usage'], {
    input_tokens: 3,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 2,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 5,
  });
  assert.equal(responseFromChat(chatCompletion({ text: ['x'], finish: 'stop' }), EMPTY, CONTEXT)['usage'], null);
});

test("the node's reasoning (reasoning_content, or vLLM's reasoning) is a reasoning item before the message", () => {
  for (const field of ['reasoning_content', 'reasoning']) {
    const answer = chatCompletion({ text: ['42'], finish: 'stop' });
    const choice = (answer['choices'] as JsonObject[])[0] as JsonObject;
    (choice['message'] as JsonObject)[field] = 'think first';
    const output = responseFromChat(answer, EMPTY, CONTEXT)['output'] as JsonObject[];
    assert.deepEqual(
      output[0],
      { type: 'reasoning', id: 'rs_req7f3a_0', summary: [], content: [{ type: 'reasoning_text', text: 'think first' }] },
      field,
    );
    assert.equal(output[1]?.['id'], 'msg_req7f3a_1');
  }
});

test('tool calls are function_call items with call_id, name and arguments; namespaced and custom tools come back as the client named them', () => {
  const memo = memoFor({
    tools: [
      { type: 'function', name: 'exec_command', parameters: { type: 'object' } },
      { type: 'namespace', name: 'multi_agent_v1', description: '', tools: [{ type: 'function', name: 'spawn_agent' }] },
      { type: 'custom', name: 'apply_patch', description: 'Edit.' },
    ],
  });
  const answer = chatCompletion({
    finish: 'tool_calls',
    calls: [
      { id: 'call_a', name: 'exec_command', pieces: ['{"cmd":"ls"}'] },
      { id: 'call_b', name: 'multi_agent_v1__spawn_agent', pieces: ['{}'] },
      { id: 'call_c', name: 'apply_patch', pieces: ['{"input":"*** Begin Patch\\n*** End Patch"}'] },
    ],
  });
  assert.deepEqual(responseFromChat(answer, memo, CONTEXT)['output'], [
    {
      type: 'function_call',
      id: 'fc_req7f3a_0',
      call_id: 'call_a',
      name: 'exec_command',
      arguments: '{"cmd":"ls"}',
      status: 'completed',
    },
    {
      type: 'function_call',
      id: 'fc_req7f3a_1',
      call_id: 'call_b',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
      arguments: '{}',
      status: 'completed',
    },
    {
      type: 'custom_tool_call',
      id: 'ctc_req7f3a_2',
      call_id: 'call_c',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** End Patch',
      status: 'completed',
    },
  ]);
});

test('finish_reason length → status incomplete, reason max_output_tokens, the message incomplete', () => {
  const response = responseFromChat(chatCompletion({ text: ['cut sh'], finish: 'length' }), EMPTY, CONTEXT);
  assert.equal(response['status'], 'incomplete');
  assert.deepEqual(response['incomplete_details'], { reason: 'max_output_tokens' });
  assert.equal((response['output'] as JsonObject[])[0]?.['status'], 'incomplete');
});

test('an answer without choices is a failed response that says why', () => {
  const response = responseFromChat({ id: 'x', object: 'chat.completion', choices: [] }, EMPTY, CONTEXT);
  assert.equal(response['status'], 'failed');
  assert.deepEqual(response['output'], []);
  assert.match(String((response['error'] as JsonObject)['message']), /without a message/);
});

test('the response repeats what the client asked (tools, tool_choice, instructions) and says nothing was stored', () => {
  const memo = memoFor({ instructions: 'be brief', tool_choice: 'none', max_output_tokens: 9, store: true });
  const response = responseFromChat(chatCompletion({ text: ['x'], finish: 'stop' }), memo, CONTEXT);
  assert.equal(response['instructions'], 'be brief');
  assert.equal(response['tool_choice'], 'none');
  assert.equal(response['max_output_tokens'], 9);
  assert.equal(response['store'], false);
  assert.equal(response['previous_response_id'], null);
});

test('the openai SDK reads the answer: output_text and the function call', async () => {
  const memo = memoFor({ tools: [{ type: 'function', name: 'exec_command' }] });
  const answer = chatCompletion({
    text: ['Listing.'],
    calls: [{ id: 'call_a', name: 'exec_command', pieces: ['{"cmd":"ls"}'] }],
    finish: 'tool_calls',
    usage: USAGE,
  });
  const body = JSON.stringify(responseFromChat(answer, memo, CONTEXT));
  const response = await clientAnswering(body, 'application/json').responses.create({ model: 'coder', input: 'hi' });
  assert.equal(response.output_text, 'Listing.');
  const call = response.output.find((item) => item.type === 'function_call');
  assert.equal(call?.type === 'function_call' && call.arguments, '{"cmd":"ls"}');
  assert.equal(response.usage?.input_tokens_details.cached_tokens, 100);
});
