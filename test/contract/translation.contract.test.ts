// The one contract every translation passes (src/translate/translation.ts), run for every entry of
// TRANSLATIONS, so a translation added to the list is covered the moment it is listed: its request
// gives a body its node endpoint accepts (the stream asked with its usage), a recorded node answer
// and a recorded node stream give well-formed client answers and events in the client API's order,
// fail() and error() give the client API's error shapes, a request it cannot carry names the field,
// and nothing it is given is changed. What differs per API (a sample request, the client's shapes)
// is in the tables below: a translation with no row fails here.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InferenceEndpoint } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import type { JsonObject, Translation, TranslationContext } from '#src/translate/translation.ts';
import { TRANSLATIONS } from '#src/translate/translations.ts';

type Json = Record<string, unknown>;

const CONTEXT: TranslationContext = Object.freeze({ requestId: 'req-0001', model: 'coder-alias', nowSeconds: 1_800_000_000 });

/** Per client API: a request it can carry (with a tool), and one it cannot with the field it must name. */
const SAMPLES: Partial<Record<InferenceEndpoint, { readonly carried: Json; readonly uncarried: Json; readonly field: string }>> =
  {
    '/v1/messages': {
      carried: {
        model: 'coder',
        max_tokens: 64,
        system: 'be brief',
        tools: [{ name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'list the files' }],
      },
      uncarried: {
        model: 'coder',
        max_tokens: 64,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'f_1' } }] }],
      },
      field: 'messages[0].content[0].source',
    },
    '/v1/responses': {
      carried: {
        model: 'coder',
        max_output_tokens: 64,
        instructions: 'be brief',
        tools: [{ type: 'function', name: 'Bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } }],
        input: [{ role: 'user', content: 'list the files' }],
      },
      uncarried: { model: 'coder', input: [{ type: 'item_reference', id: 'msg_1' }] },
      field: 'input[0].type',
    },
  };

/** Per client API: what a whole answer and the event stream must look like (the events' names in order). */
const CLIENT_SHAPES: Partial<
  Record<
    InferenceEndpoint,
    {
      answer(body: Json): void;
      events(names: readonly string[], data: readonly Json[]): void;
      /** The events fail() gives: the client API's terminal error (one event, or its failed response then the error). */
      failure(names: readonly string[], data: readonly Json[]): void;
      error(body: Json, status: number): void;
    }
  >
> = {
  '/v1/messages': {
    answer(body) {
      assert.equal(body.type, 'message');
      assert.equal(body.role, 'assistant');
      assert.equal(body.model, CONTEXT.model);
      assert.ok(Array.isArray(body.content) && body.content.length > 0);
      assert.ok(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence', 'refusal'].includes(String(body.stop_reason)));
      const usage = body.usage as Json;
      assert.ok(typeof usage.input_tokens === 'number' && typeof usage.output_tokens === 'number');
    },
    events(names, data) {
      names.forEach((name, i) => assert.equal(data[i]?.type, name, 'each event is named by its data type'));
      assert.equal(names[0], 'message_start');
      assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
      // Blocks open and close in order, each delta inside its open block.
      let open: number | undefined;
      names.forEach((name, i) => {
        const index = data[i]?.index;
        if (name === 'content_block_start') {
          assert.equal(open, undefined, 'one block at a time');
          open = index as number;
        } else if (name === 'content_block_delta') assert.equal(index, open);
        else if (name === 'content_block_stop') {
          assert.equal(index, open);
          open = undefined;
        }
      });
      assert.equal(open, undefined, 'every block closed before message_delta');
    },
    failure(names) {
      assert.deepEqual(names, ['error']);
    },
    error(body, status) {
      assert.equal(body.type, 'error');
      const error = body.error as Json;
      assert.equal(typeof error.message, 'string');
      assert.equal(
        error.type,
        status === 404 ? 'not_found_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error',
      );
    },
  },

  '/v1/responses': {
    answer(body) {
      assert.equal(body.object, 'response');
      assert.match(String(body.id), /^resp_/);
      assert.equal(body.model, CONTEXT.model);
      assert.ok(['completed', 'incomplete'].includes(String(body.status)));
      assert.ok(Array.isArray(body.output) && body.output.length > 0);
      const usage = body.usage as Json;
      assert.ok(typeof usage.input_tokens === 'number' && typeof usage.output_tokens === 'number');
    },
    events(names, data) {
      names.forEach((name, i) => {
        assert.equal(data[i]?.type, name, 'each event is named by its data type');
        assert.equal(data[i]?.sequence_number, i, 'numbered in order from 0');
      });
      assert.deepEqual(names.slice(0, 2), ['response.created', 'response.in_progress']);
      const terminal = names.at(-1) === 'error' ? names.at(-2) : names.at(-1);
      assert.ok(['response.completed', 'response.incomplete', 'response.failed'].includes(String(terminal)), names.join(' '));
      // Each output item is added before its events and done once, before the response ends.
      const added = new Set<unknown>();
      const done = new Set<unknown>();
      names.forEach((name, i) => {
        const index = data[i]?.output_index;
        if (name === 'response.output_item.added') added.add(index);
        else if (name === 'response.output_item.done') {
          assert.ok(added.has(index) && !done.has(index), `${name} of item ${String(index)}`);
          done.add(index);
        } else if (index !== undefined) assert.ok(added.has(index) && !done.has(index), `${name} outside its item`);
      });
      if (terminal !== 'response.failed') assert.equal(done.size, added.size, 'every item done before the response ends');
    },
    failure(names, data) {
      // response.failed is what Codex reads; the error event is what the openai SDK throws on.
      assert.deepEqual(names, ['response.failed', 'error']);
      assert.equal((data[0]?.response as Json).status, 'failed');
    },
    error(body, status) {
      const error = body.error as Json;
      assert.equal(typeof error.message, 'string');
      assert.equal(error.type, status === 429 ? 'rate_limit_error' : 'invalid_request_error');
      assert.ok('param' in error && 'code' in error);
    },
  },
};

/** What each node endpoint accepts (a well-formed body in its API). */
const NODE_ACCEPTS: Partial<Record<InferenceEndpoint, (body: JsonObject, stream: boolean) => void>> = {
  '/v1/chat/completions': (body, stream) => {
    assert.equal(typeof body.model, 'string');
    assert.ok(Array.isArray(body.messages) && body.messages.length > 0);
    for (const m of body.messages as unknown[]) {
      assert.ok(isRecord(m) && ['system', 'user', 'assistant', 'tool'].includes(String(m.role)), JSON.stringify(m));
    }
    if (stream) {
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
    } else assert.notEqual(body.stream, true);
    JSON.parse(JSON.stringify(body));
  },
};

/** A Chat Completions answer and stream as vLLM sends them (the reference shapes), with a tool call. */
const CHAT_ANSWER: JsonObject = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'coder',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
};
const CHAT_STREAM: readonly string[] = [
  '{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{"content":"Let me"},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{"content":" look."},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"command\\":"}}]},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"ls\\"}"}}]},"finish_reason":null}],"usage":null}',
  '{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}',
  '{"id":"c","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}',
  '[DONE]',
];

/** Whole SSE events → their names and parsed data; every event is whole and its data JSON. */
function parseEvents(text: string): { names: string[]; data: Json[] } {
  assert.ok(text === '' || text.endsWith('\n\n'), 'whole events only');
  const names: string[] = [];
  const data: Json[] = [];
  for (const block of text.split('\n\n').filter((b) => b !== '')) {
    const line = /^data: (.*)$/m.exec(block)?.[1];
    assert.ok(line !== undefined, `an event without data: ${block}`);
    const parsed: unknown = JSON.parse(line);
    assert.ok(isRecord(parsed));
    names.push(/^event: (.*)$/m.exec(block)?.[1] ?? String(parsed.type));
    data.push({ ...parsed });
  }
  return { names, data };
}

function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFrozen(inner);
    Object.freeze(value);
  }
  return value;
}

function translated(translation: Translation, body: Json) {
  const result = translation.request(deepFrozen(structuredClone(body)), CONTEXT);
  assert.equal(result.kind, 'translated', JSON.stringify(result));
  if (result.kind !== 'translated') throw new Error('unreachable');
  return result;
}

test('every translation is listed once by name, and has its samples and shapes here', () => {
  assert.ok(TRANSLATIONS.length > 0);
  assert.equal(new Set(TRANSLATIONS.map((t) => t.name)).size, TRANSLATIONS.length);
  for (const t of TRANSLATIONS) {
    assert.ok(SAMPLES[t.client] !== undefined, `${t.name}: no sample request for ${t.client}`);
    assert.ok(CLIENT_SHAPES[t.client] !== undefined, `${t.name}: no client shapes for ${t.client}`);
    assert.ok(NODE_ACCEPTS[t.node] !== undefined, `${t.name}: no node acceptance for ${t.node}`);
    assert.notEqual(t.client, t.node);
  }
});

for (const translation of TRANSLATIONS) {
  const sample = SAMPLES[translation.client];
  const shapes = CLIENT_SHAPES[translation.client];
  const accepts = NODE_ACCEPTS[translation.node];
  if (sample === undefined || shapes === undefined || accepts === undefined) continue;

  describe(`translation ${translation.name}`, () => {
    test('a request becomes a body the node endpoint accepts; a stream asks for its usage', () => {
      const plain = translated(translation, sample.carried);
      assert.equal(plain.stream, false);
      accepts(plain.body, false);
      const streamed = translated(translation, { ...sample.carried, stream: true });
      assert.equal(streamed.stream, true);
      accepts(streamed.body, true);
    });

    test('a whole node answer becomes a well-formed client answer', () => {
      const { memo } = translated(translation, sample.carried);
      const answer = translation.answer(deepFrozen(structuredClone(CHAT_ANSWER)), memo, CONTEXT);
      shapes.answer(JSON.parse(JSON.stringify(answer)) as Json);
    });

    test('a recorded node stream becomes whole client events, in the client API’s order; end() adds nothing after', () => {
      const { memo } = translated(translation, { ...sample.carried, stream: true });
      const stream = translation.stream(memo, CONTEXT);
      const text = CHAT_STREAM.map((data) => stream.event(data)).join('');
      const { names, data } = parseEvents(text);
      shapes.events(names, data);
      assert.equal(stream.end(), '', 'the closing events are owed once');
      assert.equal(stream.fail('late'), '', 'nothing after the stream closed');
    });

    test('a node stream that ends without [DONE] is closed by end()', () => {
      const { memo } = translated(translation, { ...sample.carried, stream: true });
      const stream = translation.stream(memo, CONTEXT);
      const text =
        CHAT_STREAM.slice(0, 3)
          .map((data) => stream.event(data))
          .join('') + stream.end();
      const { names, data } = parseEvents(text);
      shapes.events(names, data);
    });

    test('fail() is the client API’s whole terminal error events', () => {
      const { memo } = translated(translation, { ...sample.carried, stream: true });
      const stream = translation.stream(memo, CONTEXT);
      const before = stream.event(CHAT_STREAM[1] as string);
      const failed = stream.fail('the node went away');
      const { names, data } = parseEvents(failed);
      shapes.failure(names, data);
      assert.match(JSON.stringify(data.at(-1)), /the node went away/);
      assert.ok(before.length > 0);
      assert.equal(stream.end(), '', 'no closing events after the error');
    });

    test('error() words a node’s error in the client API’s shape, by status', () => {
      for (const [status, body] of [
        [400, { error: { message: 'bad field', type: 'invalid_request_error', param: null, code: null } }],
        [404, { detail: 'Not Found' }],
        [429, 'slow down'],
        [400, undefined],
      ] as const) {
        const worded = translation.error(status, body);
        shapes.error(JSON.parse(JSON.stringify(worded)) as Json, status);
      }
      assert.match(JSON.stringify(translation.error(400, { error: { message: 'bad field' } })), /bad field/);
    });

    test('a request it cannot carry is untranslatable, naming the field', () => {
      const result = translation.request(deepFrozen(structuredClone(sample.uncarried)), CONTEXT);
      assert.equal(result.kind, 'untranslatable');
      if (result.kind !== 'untranslatable') return;
      assert.equal(result.field, sample.field);
      assert.ok(result.message.includes(sample.field), result.message);
    });
  });
}
