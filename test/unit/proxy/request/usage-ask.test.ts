// Asking a node for a stream's usage in the request's bytes (issue 23, usage accounting): only the
// `stream_options.include_usage` member changes; every other byte stays the client's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageAsk, withUsageAsked } from '#src/proxy/request/usage-ask.ts';
import { scanBody, withoutTopLevelMembers } from '#src/proxy/request/raw-json.ts';
import { countTokenMarkers, SeenTokens } from '#src/proxy/attempt/seen-tokens.ts';

const request = (text: string) => {
  const json = JSON.parse(text) as Record<string, unknown>;
  return { stream: json.stream === true, json, body: Buffer.from(text) };
};

const TABLE: readonly { name: string; body: string; want: string | undefined }[] = [
  {
    name: 'no stream_options: the member added first',
    body: '{"model":"m","stream":true,"seed":9007199254740993}',
    want: '{"stream_options":{"include_usage":true},"model":"m","stream":true,"seed":9007199254740993}',
  },
  {
    name: 'stream_options null',
    body: '{"stream":true, "stream_options": null}',
    want: '{"stream":true, "stream_options": {"include_usage":true}}',
  },
  {
    name: 'stream_options without include_usage',
    body: '{"stream":true,"stream_options":{"continuous_usage_stats":false}}',
    want: '{"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":false}}',
  },
  {
    name: 'empty stream_options',
    body: '{"stream":true,"stream_options":{ }}',
    want: '{"stream":true,"stream_options":{"include_usage":true }}',
  },
  {
    name: 'include_usage false replaced',
    body: '{"stream":true,"stream_options":{"include_usage": false}}',
    want: '{"stream":true,"stream_options":{"include_usage": true}}',
  },
  {
    name: 'a repeated stream_options: the last (the one parsers keep) changed',
    body: '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{}}',
    want: '{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"include_usage":true}}',
  },
  {
    name: 'the client asked itself: untouched',
    body: '{"stream":true,"stream_options":{"include_usage":true}}',
    want: undefined,
  },
  { name: 'not streaming: untouched', body: '{"stream":false}', want: undefined },
  {
    name: "vLLM's continuous_usage_stats (usage on every chunk once asked): untouched",
    body: '{"stream":true,"stream_options":{"continuous_usage_stats":true}}',
    want: undefined,
  },
  {
    name: "stream_options of the wrong type: the node's to refuse",
    body: '{"stream":true,"stream_options":"yes"}',
    want: undefined,
  },
];

for (const c of TABLE) {
  test(`withUsageAsked: ${c.name}`, () => {
    const asked = withUsageAsked(request(c.body));
    assert.equal(asked?.toString('utf8'), c.want);
    if (asked !== undefined)
      assert.equal(
        (JSON.parse(asked.toString('utf8')) as { stream_options: { include_usage: unknown } }).stream_options.include_usage,
        true,
      );
  });
}

test('UsageAsk builds the body once per request', () => {
  const ask = new UsageAsk('/v1/chat/completions', request('{"stream":true}'));
  const first = ask.body();
  assert.equal(ask.body(), first);
});

test('withoutTopLevelMembers takes out the members with the value, and one comma each', () => {
  const cases: [string, string][] = [
    ['{"a":1,"usage":null,"b":2}', '{"a":1,"b":2}'],
    ['{"a":1,"usage":null}', '{"a":1}'],
    ['{"usage":null}', '{}'],
    ['{"usage" : null , "a": 1}', '{"a": 1}'],
    ['{"a": 1, "usage": null}', '{"a": 1}'],
    ['{"a":{"usage":null},"usage":{"x":1}}', '{"a":{"usage":null},"usage":{"x":1}}'],
  ];
  for (const [text, want] of cases) {
    const raw = Buffer.from(text);
    assert.equal(withoutTopLevelMembers(raw, scanBody(raw, 'usage'), Buffer.from('null')).toString(), want, text);
  }
});

test('countTokenMarkers counts generated text that is not empty, never a quoted key', () => {
  const cases: [string, number][] = [
    ['{"delta":{"content":"a"}}', 1],
    ['{"delta":{"role":"assistant","content":""}}', 0],
    ['{"delta":{"content":null}}', 0],
    ['{"choices":[{"text":" x"}],"object":"text_completion"}', 1],
    ['{"type":"response.output_text.delta","delta":"hi"}', 1],
    ['{"delta":{"type":"text_delta","text":"hi"}}', 1],
    ['{"delta":{"reasoning_content":"r"}}', 1],
    ['{"delta":{"tool_calls":[{"function":{"arguments":"{\\"a\\":"}}]}}', 1],
    ['{"delta":{"content":"say \\"content\\":\\"x\\""}}', 1],
    ['{"delta": {"content": "spaced"}}', 1],
    ['{"model":"m","id":"x"}', 0],
  ];
  for (const [text, want] of cases) assert.equal(countTokenMarkers(text), want, text);
});

test('SeenTokens counts a marker split over chunks once, wherever the cut falls', () => {
  const text = Buffer.from(
    'data: {"choices":[{"delta":{"reasoning_content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content": "b"}}]}\n\n',
  );
  for (let cut = 1; cut < text.length; cut++) {
    for (let second = cut + 1; second <= text.length; second += 7) {
      const seen = new SeenTokens();
      seen.push(text.subarray(0, cut));
      seen.push(text.subarray(cut, second));
      seen.push(text.subarray(second));
      assert.equal(seen.count, 2, `cuts at ${cut}, ${second}`);
    }
  }
});
