// Reading what an answer used, in every dialect the gateway passes on (issue 23, usage accounting):
// one table, and the fold over a stream's events where a later statement wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statedUsage, UsageTally } from '#src/proxy/attempt/usage-reader.ts';
import { jsonTailUsage, UsageWatch } from '#src/proxy/attempt/usage-watch.ts';

const TABLE: readonly {
  name: string;
  value: unknown;
  want: { promptTokens: number | undefined; completionTokens: number | undefined } | undefined;
}[] = [
  {
    name: 'a chat answer',
    value: { choices: [], usage: { prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 } },
    want: { promptTokens: 14, completionTokens: 8 },
  },
  {
    name: 'an embeddings answer (no completion count: total less prompt)',
    value: { data: [], usage: { prompt_tokens: 5, total_tokens: 5 } },
    want: { promptTokens: 5, completionTokens: 0 },
  },
  {
    name: 'an embeddings answer with neither total nor completion',
    value: { usage: { prompt_tokens: 5 } },
    want: { promptTokens: 5, completionTokens: undefined },
  },
  {
    name: 'a Responses answer',
    value: { object: 'response', usage: { input_tokens: 77, output_tokens: 5, total_tokens: 82 } },
    want: { promptTokens: 77, completionTokens: 5 },
  },
  {
    name: "the Responses stream's response.completed",
    value: { type: 'response.completed', response: { usage: { input_tokens: 9, output_tokens: 3 } } },
    want: { promptTokens: 9, completionTokens: 3 },
  },
  {
    name: 'response.created (usage null) states nothing',
    value: { type: 'response.created', response: { usage: null } },
    want: undefined,
  },
  {
    name: 'an Anthropic message, cached input counted in',
    value: {
      type: 'message',
      usage: { input_tokens: 10, cache_read_input_tokens: 90, cache_creation_input_tokens: 0, output_tokens: 7 },
    },
    want: { promptTokens: 100, completionTokens: 7 },
  },
  {
    name: 'Anthropic message_start',
    value: { type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 1 } } },
    want: { promptTokens: 25, completionTokens: 1 },
  },
  {
    name: 'Anthropic message_delta',
    value: { type: 'message_delta', delta: {}, usage: { output_tokens: 15 } },
    want: { promptTokens: undefined, completionTokens: 15 },
  },
  {
    name: 'llama-server timings (prompt evaluated plus cached)',
    value: { choices: [{ delta: {} }], timings: { cache_n: 12, prompt_n: 1, predicted_n: 6 } },
    want: { promptTokens: 13, completionTokens: 6 },
  },
  {
    name: 'usage wins over timings in one chunk',
    value: { usage: { prompt_tokens: 13, completion_tokens: 6 }, timings: { prompt_n: 1, predicted_n: 99 } },
    want: { promptTokens: 13, completionTokens: 6 },
  },
  { name: 'a chunk with usage null', value: { choices: [{ delta: { content: 'x' } }], usage: null }, want: undefined },
  {
    name: 'counts that are not non-negative integers are not counts',
    value: { usage: { prompt_tokens: -1, completion_tokens: 1.5 } },
    want: undefined,
  },
  { name: 'not an object', value: [1, 2], want: undefined },
  {
    name: 'Ollama’s final done object (/api/chat, /api/generate)',
    value: { model: 'm', message: { content: '' }, done: true, prompt_eval_count: 26, eval_count: 282 },
    want: { promptTokens: 26, completionTokens: 282 },
  },
  {
    name: 'Ollama’s /api/embed answer: prompt only, nothing generated',
    value: { model: 'm', embeddings: [[0.1]], prompt_eval_count: 8 },
    want: { promptTokens: 8, completionTokens: undefined },
  },
  {
    name: 'Ollama’s done object with a cached prompt (no prompt_eval_count)',
    value: { done: true, eval_count: 4 },
    want: { promptTokens: undefined, completionTokens: 4 },
  },
  {
    name: 'an Ollama chunk before done states nothing',
    value: { model: 'm', message: { content: 'x' }, done: false },
    want: undefined,
  },
];

for (const c of TABLE) test(`statedUsage: ${c.name}`, () => assert.deepEqual(statedUsage(c.value), c.want));

test("a tally keeps each field as last stated: Anthropic's input from message_start, output from message_delta", () => {
  const tally = new UsageTally();
  tally.add({ type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 1 } } });
  tally.add({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'hi' } });
  tally.add({ type: 'message_delta', usage: { output_tokens: 15 } });
  assert.deepEqual(tally.usage(3, 'whole'), { promptTokens: 25, completionTokens: 15, counted: 'usage' });
});

test('a tally with nothing stated gives the seen count, or nothing', () => {
  assert.deepEqual(new UsageTally().usage(4, 'cut'), { promptTokens: undefined, completionTokens: 4, counted: 'seen' });
  assert.equal(new UsageTally().usage(undefined, 'cut'), undefined);
});

test("jsonTailUsage reads the last usage and timings objects of a JSON answer's end, never one quoted in text", () => {
  const end =
    'lo","usage_note":"say \\"usage\\": {\\"prompt_tokens\\": 999}"}],"usage":{"completion_tokens":16,"prompt_tokens":19,"prompt_tokens_details":{"cached_tokens":0}},"id":"x","timings":{"prompt_n":19,"predicted_n":16}}';
  assert.deepEqual(jsonTailUsage(end), {
    usage: { completion_tokens: 16, prompt_tokens: 19, prompt_tokens_details: { cached_tokens: 0 } },
    timings: { prompt_n: 19, predicted_n: 16 },
  });
  assert.deepEqual(jsonTailUsage('{"usage":{"prompt_tokens":1'), {}, 'an object the end cuts off is not read');
});

const sse = (...data: string[]): Buffer => Buffer.from(data.map((d) => `data: ${d}\n\n`).join(''));

test("UsageWatch reads a stream's usage chunk from its end, across chunks, and passes every byte as it came", () => {
  const watch = new UsageWatch('sse');
  const body = sse(
    ...Array.from({ length: 300 }, (_, i) => `{"choices":[{"delta":{"content":"t${i}"}}]}`),
    '{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":300}}',
    '[DONE]',
  );
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += 97) {
    const chunk = body.subarray(at, at + 97);
    const passed = watch.pass(chunk);
    assert.equal(passed, chunk, 'the same buffer: nothing copied');
    out.push(passed);
  }
  assert.ok(Buffer.concat(out).equals(body));
  assert.deepEqual(watch.usage('whole'), { promptTokens: 7, completionTokens: 300, counted: 'usage' });
});

test("UsageWatch reads Anthropic's message_start from the stream's first event, past the tail", () => {
  const watch = new UsageWatch('sse');
  watch.pass(
    Buffer.from(
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":31,"output_tokens":1}}}\n\n',
    ),
  );
  for (let i = 0; i < 100; i++)
    watch.pass(
      Buffer.from(
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w${i}"}}\n\n`,
      ),
    );
  watch.pass(
    Buffer.from(
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":100}}\n\n',
    ),
  );
  assert.deepEqual(watch.usage('whole'), { promptTokens: 31, completionTokens: 100, counted: 'usage' });
});

test('UsageWatch counts a stream cut short from the generated-text events seen', () => {
  const watch = new UsageWatch('sse');
  watch.pass(
    sse(
      '{"choices":[{"delta":{"role":"assistant","content":""}}]}',
      '{"choices":[{"delta":{"content":"a"}}]}',
      '{"choices":[{"delta":{"content":"b"}}]}',
    ),
  );
  assert.deepEqual(watch.usage('cut'), { promptTokens: undefined, completionTokens: 2, counted: 'seen' });
});

test('UsageWatch reads a JSON answer too big to hold from its end', () => {
  const watch = new UsageWatch('body');
  watch.pass(Buffer.from(`{"data":[{"embedding":[${'0.1,'.repeat(3000)}0.1]}],`));
  watch.pass(Buffer.from('"usage":{"prompt_tokens":42,"total_tokens":42}}'));
  assert.deepEqual(watch.usage('whole'), { promptTokens: 42, completionTokens: 0, counted: 'usage' });
});

test('UsageWatch reads an NDJSON stream’s final object (Ollama’s native API) from its last line', () => {
  const watch = new UsageWatch('ndjson');
  const lines = Array.from(
    { length: 200 },
    (_, i) => `{"model":"m","message":{"role":"assistant","content":"t${i}"},"done":false}\n`,
  );
  lines.push(
    '{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":31,"eval_count":200}\n',
  );
  const body = Buffer.from(lines.join(''));
  for (let at = 0; at < body.length; at += 113) watch.pass(body.subarray(at, at + 113));
  assert.deepEqual(watch.usage('whole'), { promptTokens: 31, completionTokens: 200, counted: 'usage' });
});

test('one rule for every dialect: a cut answer is charged what the node reported last, never less than what was relayed', () => {
  const cases: [what: string, stated: unknown[], relayed: number | undefined, end: 'whole' | 'cut', want: unknown][] = [
    ['nothing stated, nothing relayed', [], 0, 'cut', { promptTokens: undefined, completionTokens: 0, counted: 'seen' }],
    ['nothing stated, a body (nothing counted)', [], undefined, 'cut', undefined],
    ['nothing stated, 7 relayed', [], 7, 'cut', { promptTokens: undefined, completionTokens: 7, counted: 'seen' }],
    [
      'Anthropic message_start only (output 0), cut after 9 relayed',
      [{ type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 0 } } }],
      9,
      'cut',
      { promptTokens: 25, completionTokens: 9, counted: 'seen' },
    ],
    [
      'Anthropic message_start and message_delta, cut just after',
      [
        { type: 'message_start', message: { usage: { input_tokens: 25, output_tokens: 1 } } },
        { type: 'message_delta', usage: { output_tokens: 12 } },
      ],
      12,
      'cut',
      { promptTokens: 25, completionTokens: 12, counted: 'usage' },
    ],
    [
      'a running count (continuous usage) behind what was relayed',
      [{ usage: { prompt_tokens: 5, completion_tokens: 3 } }],
      4,
      'cut',
      { promptTokens: 5, completionTokens: 4, counted: 'seen' },
    ],
    [
      'a whole answer: its final count stands even below the relayed count',
      [{ type: 'response.completed', response: { usage: { input_tokens: 9, output_tokens: 3 } } }],
      7,
      'whole',
      { promptTokens: 9, completionTokens: 3, counted: 'usage' },
    ],
    [
      'Ollama done object, whole',
      [{ done: true, prompt_eval_count: 26, eval_count: 3 }],
      3,
      'whole',
      { promptTokens: 26, completionTokens: 3, counted: 'usage' },
    ],
  ];
  for (const [what, stated, relayed, end, want] of cases) {
    const tally = new UsageTally();
    for (const value of stated) tally.add(value);
    assert.deepEqual(tally.usage(relayed, end), want, what);
  }
});

test('UsageWatch counts an NDJSON stream cut short (Ollama’s native chat and generate) from the lines relayed', () => {
  const chat = new UsageWatch('ndjson');
  for (let i = 0; i < 5; i++)
    chat.pass(Buffer.from(`{"model":"m","created_at":"t","message":{"role":"assistant","content":"w${i}"},"done":false}\n`));
  chat.pass(Buffer.from('{"model":"m","created_at":"t","message":{"role":"assis'));
  assert.deepEqual(chat.usage('cut'), { promptTokens: undefined, completionTokens: 5, counted: 'seen' });
  const generate = new UsageWatch('ndjson');
  for (let i = 0; i < 3; i++) generate.pass(Buffer.from(`{"model":"m","created_at":"t","response":" w${i}","done":false}\n`));
  assert.deepEqual(generate.usage('cut'), { promptTokens: undefined, completionTokens: 3, counted: 'seen' });
  const body = new UsageWatch('body');
  body.pass(Buffer.from('{"message":{"content":"not counted: a body"'));
  assert.equal(body.usage('cut'), undefined);
});

test("UsageWatch: an Anthropic stream cut after its opening event is charged the deltas relayed, not message_start's 0", () => {
  const watch = new UsageWatch('sse');
  watch.pass(
    Buffer.from(
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":31,"output_tokens":0}}}\n\n',
    ),
  );
  watch.pass(
    Buffer.from(
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
    ),
  );
  for (let i = 0; i < 6; i++)
    watch.pass(
      Buffer.from(
        `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"w${i}"}}\n\n`,
      ),
    );
  assert.deepEqual(watch.usage('cut'), { promptTokens: 31, completionTokens: 6, counted: 'seen' });
});

test("a Responses answer's id comes with its usage, whole or from a stream's response.completed; no other dialect has one", () => {
  const usage = { input_tokens: 4, output_tokens: 2, total_tokens: 6 };
  assert.equal(statedUsage({ id: 'resp_1', object: 'response', usage })?.answerId, 'resp_1');
  assert.equal(
    statedUsage({ type: 'response.completed', response: { id: 'resp_2', object: 'response', usage } })?.answerId,
    'resp_2',
  );
  assert.equal(statedUsage({ id: 'chatcmpl-1', object: 'chat.completion', usage: { prompt_tokens: 1 } })?.answerId, undefined);
  assert.equal(statedUsage({ id: 'msg_1', type: 'message', usage })?.answerId, undefined);
  const tally = new UsageTally();
  tally.add({ type: 'response.created', response: { id: 'resp_3', object: 'response', usage: null } });
  tally.add({ type: 'response.completed', response: { id: 'resp_3', object: 'response', usage } });
  assert.equal(tally.usage(2, 'whole')?.answerId, 'resp_3');
  const plain = new UsageTally();
  plain.add({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } });
  assert.equal('answerId' in (plain.usage(1, 'whole') ?? {}), false, 'a chat answer carries no id field at all');
});
