// Taking out of a stream what asking for its usage added (issue 23, usage accounting): the usage
// chunk with its empty line, and the `"usage":null` of the other chunks where the kind adds them,
// so the client gets byte for byte the stream it would have got; wherever the chunks are cut.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_FRAMED_EVENT_BYTES, UsageStrip } from '#src/proxy/attempt/usage-strip.ts';
import { EventFramer, dataSpan, runEvents } from '#src/proxy/attempt/sse-events.ts';
import { withoutNullUsage } from '#src/proxy/request/usage-ask.ts';

const asked = (nullsAdded: boolean) => ({ withoutAddedNulls: nullsAdded ? withoutNullUsage : undefined });

interface Stream {
  readonly name: string;
  /** What the node sends once asked. */
  readonly asked: string;
  /** What it would have sent unasked: what the client must get. */
  readonly unasked: string;
  readonly nullsAdded: boolean;
  readonly usage: { promptTokens: number | undefined; completionTokens: number | undefined; counted: 'usage' | 'seen' };
}

const chunk = (content: string, usage: string): string =>
  `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]${usage}}`;

const STREAMS: readonly Stream[] = [
  {
    name: 'vLLM/OpenAI: usage null on every chunk, and a usage chunk (UTF-8 content)',
    asked:
      ['héllo', ' wörld ✓', '日本'].map((c) => `data: ${chunk(c, ',"usage":null')}\n\n`).join('') +
      'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9,"total_tokens":12,"completion_tokens":3}}\n\ndata: [DONE]\n\n',
    unasked: ['héllo', ' wörld ✓', '日本'].map((c) => `data: ${chunk(c, '')}\n\n`).join('') + 'data: [DONE]\n\n',
    nullsAdded: true,
    usage: { promptTokens: 9, completionTokens: 3, counted: 'usage' },
  },
  {
    name: 'SGLang: its nulls come asked or not, and stay',
    asked:
      ['a', 'b'].map((c) => `data: ${chunk(c, ',"usage":null')}\n\n`).join('') +
      'data: {"id":"c1","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}\n\ndata: [DONE]\n\n',
    unasked: ['a', 'b'].map((c) => `data: ${chunk(c, ',"usage":null')}\n\n`).join('') + 'data: [DONE]\n\n',
    nullsAdded: false,
    usage: { promptTokens: 4, completionTokens: 2, counted: 'usage' },
  },
  {
    name: 'CRLF line ends, a ping comment, and nulls in the middle of the chunk',
    asked:
      ': ping\r\n\r\n' +
      ['x', 'y'].map((c) => `data: {"id":"c1","usage":null,"choices":[{"delta":{"content":"${c}"}}]}\r\n\r\n`).join('') +
      'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\r\n\r\ndata: [DONE]\r\n\r\n',
    unasked:
      ': ping\r\n\r\n' +
      ['x', 'y'].map((c) => `data: {"id":"c1","choices":[{"delta":{"content":"${c}"}}]}\r\n\r\n`).join('') +
      'data: [DONE]\r\n\r\n',
    nullsAdded: true,
    usage: { promptTokens: 3, completionTokens: 2, counted: 'usage' },
  },
  {
    name: 'spaces after the separators (a Python json.dumps server)',
    asked:
      'data: {"id": "c1", "usage": null, "choices": [{"delta": {"content": "z"}}]}\n\ndata: {"choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 1}}\n\ndata: [DONE]\n\n',
    unasked: 'data: {"id": "c1", "choices": [{"delta": {"content": "z"}}]}\n\ndata: [DONE]\n\n',
    nullsAdded: true,
    usage: { promptTokens: 2, completionTokens: 1, counted: 'usage' },
  },
  {
    name: 'an event line and a data line without a space; a mid-stream error event passes',
    asked: 'event: x\ndata:{"usage":null,"choices":[{"text":"q"}]}\n\ndata: {"error":{"message":"usage limit","code":500}}\n\n',
    unasked: 'event: x\ndata:{"choices":[{"text":"q"}]}\n\ndata: {"error":{"message":"usage limit","code":500}}\n\n',
    nullsAdded: true,
    usage: { promptTokens: undefined, completionTokens: 1, counted: 'seen' },
  },
];

function run(strip: UsageStrip, chunks: readonly Buffer[]): Buffer {
  const out = chunks.map((c) => strip.pass(c));
  out.push(strip.flush());
  return Buffer.concat(out);
}

for (const s of STREAMS) {
  const bytes = Buffer.from(s.asked);
  test(`${s.name}: whole, and cut at every byte (mid-event, mid-UTF-8)`, () => {
    const whole = new UsageStrip(asked(s.nullsAdded));
    assert.equal(run(whole, [bytes]).toString('utf8'), s.unasked);
    assert.deepEqual(whole.usage('whole'), s.usage);
    for (let cut = 1; cut < bytes.length; cut++) {
      const strip = new UsageStrip(asked(s.nullsAdded));
      const got = run(strip, [bytes.subarray(0, cut), bytes.subarray(cut)]);
      assert.ok(got.equals(Buffer.from(s.unasked)), `cut at ${cut}: ${JSON.stringify(got.toString('utf8'))}`);
      assert.deepEqual(strip.usage('whole'), s.usage, `cut at ${cut}`);
    }
  });
  test(`${s.name}: one byte at a time`, () => {
    const strip = new UsageStrip(asked(s.nullsAdded));
    const got = run(
      strip,
      Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)),
    );
    assert.equal(got.toString('utf8'), s.unasked);
    assert.deepEqual(strip.usage('whole'), s.usage);
  });
}

test('a stream cut before its usage chunk is counted from the content events seen, the role and finish chunks not', () => {
  const strip = new UsageStrip(asked(true));
  const events = [
    '{"choices":[{"delta":{"role":"assistant","content":""}}],"usage":null}',
    '{"choices":[{"delta":{"content":"one"}}],"usage":null}',
    '{"choices":[{"delta":{"reasoning_content":"hmm"}}],"usage":null}',
    '{"choices":[{"delta":{"content":"two"}}],"usage":null}',
    '{"choices":[{"delta":{"content":""},"finish_reason":"length"}],"usage":null}',
  ];
  strip.pass(Buffer.from(events.map((e) => `data: ${e}\n\n`).join('') + 'data: {"choices":[{"delta":{"content":"thr'));
  assert.deepEqual(strip.usage('cut'), { promptTokens: undefined, completionTokens: 3, counted: 'seen' });
});

test("a stream cut after its usage chunk keeps the node's count", () => {
  const strip = new UsageStrip(asked(false));
  strip.pass(
    Buffer.from(
      'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\n',
    ),
  );
  assert.deepEqual(strip.usage('cut'), { promptTokens: 5, completionTokens: 1, counted: 'usage' });
});

test('an event past the framing bound is passed on as is, and so is the rest of the stream', () => {
  const strip = new UsageStrip(asked(true));
  const big = Buffer.from(`data: {"choices":[{"delta":{"content":"${'x'.repeat(MAX_FRAMED_EVENT_BYTES)}`);
  const out = [strip.pass(big.subarray(0, 1000)), strip.pass(big.subarray(1000))];
  assert.ok(Buffer.concat(out).equals(big));
  const later = Buffer.from('"}}],"usage":null}\n\n');
  assert.equal(strip.pass(later), later);
});

test('EventFramer ends events at an empty line, in LF, CRLF and CR', () => {
  const framer = new EventFramer();
  const events = runEvents(framer.push(Buffer.from('data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: d')));
  assert.deepEqual(events.map(String), ['data: a\n\n', 'data: b\r\n\r\n', 'data: c\r\r']);
  assert.equal(String(framer.rest()), 'data: d');
});

test('EventFramer hands the events a chunk finishes as one run, what waited first', () => {
  const framer = new EventFramer();
  assert.equal(framer.push(Buffer.from('data: a\n')).ends.length, 0);
  const run = framer.push(Buffer.from('\ndata: b\n\ndata: c'));
  assert.equal(String(run.bytes), 'data: a\n\ndata: b\n\n');
  assert.deepEqual(runEvents(run).map(String), ['data: a\n\n', 'data: b\n\n']);
  assert.equal(framer.pendingBytes, 'data: c'.length);
  assert.equal(run.text, run.bytes.toString('latin1'));
  const whole = framer.push(Buffer.from('\r\n\r\ndata: é\n\n'));
  assert.deepEqual(runEvents(whole).map(String), ['data: c\r\n\r\n', 'data: é\n\n']);
  assert.equal(whole.text, whole.bytes.toString('latin1'));
});

test('a chunk of whole events that name no usage passes as that very chunk: not cut into events, not copied', () => {
  const strip = new UsageStrip(asked(true));
  const chunk = Buffer.from(['a', 'b', 'c'].map((c) => `data: {"choices":[{"delta":{"content":"${c}"}}]}\n\n`).join(''));
  assert.equal(strip.pass(chunk), chunk);
  assert.equal(strip.seenTokens(), 3);
});

test("dataSpan finds the one data line's value, and none when there are two", () => {
  const event = Buffer.from('event: e\ndata: {"a":1}\n\n');
  const span = dataSpan(event);
  assert.ok(span !== undefined);
  assert.equal(String(event.subarray(span[0], span[1])), '{"a":1}');
  assert.equal(dataSpan(Buffer.from('data: 1\ndata: 2\n\n')), undefined);
});
