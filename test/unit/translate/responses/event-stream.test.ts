// A node's chat stream → the Responses event stream: the events in OpenAI's order with their
// sequence numbers, the closing events after the usage chunk, the final response equal to the
// whole answer's, a failure as `response.failed` + `error`; and the openai SDK's stream reader
// (the strictest client at hand) accepts every stream here.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APIError } from 'openai';
import { responseFromChat } from '#src/translate/responses/chat-answer.ts';
import { chatRequest } from '#src/translate/responses/chat-request.ts';
import { responsesEventStream } from '#src/translate/responses/event-stream.ts';
import { responsesMemo, type ResponsesMemo } from '#src/translate/responses/memo.ts';
import type { JsonObject } from '#src/translate/translation.ts';
import {
  CONTEXT,
  USAGE,
  chatChunks,
  chatCompletion,
  parseSse,
  sdkFinalResponse,
  translateStream,
  type ChatScript,
} from '#test/unit/translate/responses/chat-stream.ts';

const EMPTY: ResponsesMemo = { tools: {}, echo: {} };

/** The output without what the SDK's parse helpers add (`parsed`, `parsed_arguments`). */
const withoutSdkFields = (output: unknown): unknown =>
  JSON.parse(
    JSON.stringify(output, (key, value: unknown) => (key === 'parsed' || key === 'parsed_arguments' ? undefined : value)),
  );

function memoFor(body: JsonObject): ResponsesMemo {
  const translated = chatRequest({ model: 'coder', input: 'hi', stream: true, ...body }, CONTEXT);
  assert.equal(translated.kind, 'translated');
  return responsesMemo(translated.kind === 'translated' ? translated.memo : undefined);
}

const run = (script: ChatScript, memo: ResponsesMemo = EMPTY): string =>
  translateStream(responsesEventStream(memo, CONTEXT), chatChunks(script));
const types = (sse: string): string[] => parseSse(sse).map((event) => event.event);

test('a text answer: created, in_progress, the message item, its part, the text deltas, then completed', () => {
  const sse = run({ text: ['Hel', 'lo'], finish: 'stop', usage: USAGE });
  assert.deepEqual(types(sse), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
  const events = parseSse(sse);
  assert.deepEqual(
    events.map((event) => event.data['sequence_number']),
    events.map((_, index) => index),
    'sequence numbers count from 0 without a gap',
  );
  for (const event of events) assert.equal(event.data['type'], event.event, 'each event names its type twice');
  assert.deepEqual(
    events.filter((event) => event.event === 'response.output_text.delta').map((event) => event.data['delta']),
    ['Hel', 'lo'],
  );
  assert.equal(events[6]?.data['text'], 'Hello');
});

test('the closing events wait for the usage chunk: nothing closes before [DONE]', () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const chunks = chatChunks({ text: ['Hi'], finish: 'stop', usage: USAGE });
  const beforeDone = chunks
    .slice(0, -1)
    .map((data) => translator.event(data))
    .join('');
  assert.ok(!types(beforeDone).includes('response.completed'));
  const closing = parseSse(translator.event('[DONE]'));
  const completed = closing.at(-1);
  assert.equal(completed?.event, 'response.completed');
  assert.equal((completed?.data['response'] as JsonObject)['usage'] !== null, true);
  assert.equal(translator.end(), '', 'nothing more after the response is complete');
});

const SCRIPTS: readonly { name: string; script: ChatScript; body?: JsonObject }[] = [
  { name: 'text', script: { text: ['Hel', 'lo ', 'there'], finish: 'stop', usage: USAGE } },
  { name: 'reasoning then text', script: { reasoning: ['Let me ', 'think'], text: ['42'], finish: 'stop', usage: USAGE } },
  {
    name: 'reasoning, words and two parallel function calls',
    script: {
      reasoning: ['I will list'],
      text: ['Listing.'],
      calls: [
        { id: 'call_a', name: 'exec_command', pieces: ['{"cmd"', ':"ls"}'] },
        { id: 'call_b', name: 'exec_command', pieces: ['{"cmd":"pwd"}'] },
      ],
      finish: 'tool_calls',
      usage: USAGE,
    },
    body: { tools: [{ type: 'function', name: 'exec_command' }] },
  },
  {
    name: 'a namespaced call and a custom tool call',
    script: {
      calls: [
        { id: 'call_a', name: 'ns__spawn', pieces: ['{"task":', '"t"}'] },
        { id: 'call_b', name: 'apply_patch', pieces: ['{"input":"*** Begin', ' Patch"}'] },
      ],
      finish: 'tool_calls',
      usage: USAGE,
    },
    body: {
      tools: [
        { type: 'namespace', name: 'ns', description: '', tools: [{ type: 'function', name: 'spawn' }] },
        { type: 'custom', name: 'apply_patch' },
      ],
    },
  },
  { name: 'an answer cut at the token limit', script: { text: ['cut'], finish: 'length', usage: USAGE } },
  { name: 'an answer without usage', script: { text: ['x'], finish: 'stop' } },
];

for (const { name, script, body } of SCRIPTS) {
  test(`${name}: the openai SDK's stream reader accepts the events, and its final response is the whole answer's`, async () => {
    const memo = body === undefined ? EMPTY : memoFor(body);
    const streamed = await sdkFinalResponse(run(script, memo));
    const whole = responseFromChat(chatCompletion(script), memo, CONTEXT);
    assert.deepEqual(withoutSdkFields(streamed.output), whole['output']);
    assert.equal(streamed.status, whole['status']);
    assert.deepEqual(streamed.usage ?? null, whole['usage']);
    assert.deepEqual(streamed.incomplete_details ?? null, whole['incomplete_details']);
    assert.equal(streamed.id, whole['id']);
  });
}

test('reasoning streams as a reasoning item with a reasoning_text part, closed before the message starts', () => {
  assert.deepEqual(types(run({ reasoning: ['a', 'b'], text: ['c'], finish: 'stop' })).slice(2), [
    'response.output_item.added',
    'response.content_part.added',
    'response.reasoning_text.delta',
    'response.reasoning_text.delta',
    'response.reasoning_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ]);
});

test('a function call streams its arguments as function_call_arguments deltas, then .done with the whole text', () => {
  const events = parseSse(run({ calls: [{ id: 'call_a', name: 'f', pieces: ['{"a"', ':1}'] }], finish: 'tool_calls' }));
  assert.deepEqual(events.map((event) => event.event).slice(2), [
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.completed',
  ]);
  assert.deepEqual(events[2]?.data['item'], {
    type: 'function_call',
    id: 'fc_req7f3a_0',
    call_id: 'call_a',
    name: 'f',
    arguments: '',
    status: 'in_progress',
  });
  assert.equal(events[5]?.data['arguments'], '{"a":1}');
});

test('a custom tool input streams whole at the end, unwrapped from its {"input": …} arguments', () => {
  const memo = memoFor({ tools: [{ type: 'custom', name: 'apply_patch' }] });
  const events = parseSse(
    run({ calls: [{ id: 'c', name: 'apply_patch', pieces: ['{"input":', '"*** Begin Patch"}'] }], finish: 'tool_calls' }, memo),
  );
  assert.deepEqual(events.map((event) => event.event).slice(2, -1), [
    'response.output_item.added',
    'response.custom_tool_call_input.delta',
    'response.custom_tool_call_input.done',
    'response.output_item.done',
  ]);
  assert.equal(events[4]?.data['input'], '*** Begin Patch');
});

test('a call whose name comes after its first chunk opens once the name is known, with the arguments that waited', () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const chunk = (delta: JsonObject, finish: string | null = null) =>
    JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });
  const sse = [
    chunk({ tool_calls: [{ index: 0, id: 'call_z', function: { arguments: '{"a"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: ':1}' } }] }),
    chunk({}, 'tool_calls'),
    '[DONE]',
  ]
    .map((data) => translator.event(data))
    .join('');
  const events = parseSse(sse);
  const done = events.find((event) => event.event === 'response.output_item.done');
  assert.deepEqual(done?.data['item'], {
    type: 'function_call',
    id: 'fc_req7f3a_0',
    call_id: 'call_z',
    name: 'f',
    arguments: '{"a":1}',
    status: 'completed',
  });
});

test('finish_reason length ends with response.incomplete (reason max_output_tokens)', () => {
  const last = parseSse(run({ text: ['cu'], finish: 'length', usage: USAGE })).at(-1);
  assert.equal(last?.event, 'response.incomplete');
  const response = last?.data['response'] as JsonObject;
  assert.equal(response['status'], 'incomplete');
  assert.deepEqual(response['incomplete_details'], { reason: 'max_output_tokens' });
});

test('fail(): response.failed (what Codex reads) then an error event (what the SDK throws), and nothing after', async () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const chunks = chatChunks({ text: ['Hel', 'lo'], finish: 'stop' });
  const sse = translateStream(translator, chunks.slice(0, 3), false) + translator.fail('the node went away');
  const events = parseSse(sse);
  assert.deepEqual(
    events.slice(-2).map((event) => event.event),
    ['response.failed', 'error'],
  );
  const failed = events.at(-2)?.data['response'] as JsonObject;
  assert.equal(failed['status'], 'failed');
  assert.deepEqual(failed['error'], { code: 'server_error', message: 'the node went away' });
  assert.deepEqual(events.at(-1)?.data, {
    type: 'error',
    sequence_number: events.length - 1,
    code: 'server_error',
    message: 'the node went away',
    param: null,
  });
  assert.equal(translator.end() + translator.fail('again') + translator.event('[DONE]'), '');
  await assert.rejects(
    sdkFinalResponse(sse),
    (error: unknown) => error instanceof APIError && /the node went away/.test(error.message),
  );
});

test('fail() before any node event still opens the response first (a client reads response.created first)', () => {
  assert.deepEqual(types(responsesEventStream(EMPTY, CONTEXT).fail('no answer')), [
    'response.created',
    'response.in_progress',
    'response.failed',
    'error',
  ]);
});

test("a node's error chunk in its stream fails the response with the node's words", () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const sse =
    translator.event(chatChunks({ text: ['a'], finish: 'stop' })[1] ?? '') +
    translator.event(JSON.stringify({ error: { code: 500, message: 'slot crashed', type: 'server_error' } })) +
    translator.end();
  const events = parseSse(sse);
  assert.deepEqual(
    events.slice(-2).map((event) => event.event),
    ['response.failed', 'error'],
  );
  assert.equal(events.at(-1)?.data['message'], 'slot crashed');
});

test('a stream that ends with no finish reason and no [DONE] was cut: response.failed, not completed', () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const chunks = chatChunks({ text: ['Hel', 'lo'], finish: 'stop' });
  const sse = translateStream(translator, chunks.slice(0, 2));
  assert.deepEqual(types(sse).slice(-2), ['response.failed', 'error']);
});

test('a finish reason without [DONE] (a server that omits it) still completes at the end of the stream', () => {
  const translator = responsesEventStream(EMPTY, CONTEXT);
  const chunks = chatChunks({ text: ['Hi'], finish: 'stop' });
  const sse = translateStream(translator, chunks.slice(0, -1));
  assert.equal(types(sse).at(-1), 'response.completed');
});
