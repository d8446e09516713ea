// A stream broken after the client had bytes ends with the dialect's terminal event (or the
// reader's own, for a translated stream), after what the client got is ended cleanly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { breakSeparator, streamBreakBytes, trailingLineEndsOf } from '#src/proxy/attempt/stream-break.ts';
import type { AnswerReader } from '#src/proxy/attempt/answer-reader.ts';
import { ANTHROPIC_ERRORS, OLLAMA_ERRORS, OPENAI_ERRORS } from '#src/proxy/http/error-dialect.ts';

test('the trailing line ends of what the client got', () => {
  const cases: [string, number, number][] = [
    ['data: x\n\n', 0, 2],
    ['data: x\n', 0, 1],
    ['data: x', 2, 0],
    ['\n', 1, 2],
    ['\n', 0, 1],
    ['', 2, 2],
  ];
  for (const [more, before, expected] of cases)
    assert.equal(trailingLineEndsOf(Buffer.from(more), before), expected, JSON.stringify(more));
});

test('the separator ends an event or line cut short, and adds nothing after a whole one', () => {
  assert.equal(breakSeparator('sse', 2), '');
  assert.equal(breakSeparator('sse', 1), '\n');
  assert.equal(breakSeparator('sse', 0), '\n\n');
  assert.equal(breakSeparator('ndjson', 1), '');
  assert.equal(breakSeparator('ndjson', 0), '\n');
});

function reader(held = '', own?: (error: string) => Buffer): AnswerReader {
  return {
    pass: (chunk) => chunk,
    flush: () => Buffer.from(held),
    usage: () => undefined,
    seenTokens: () => 0,
    ...(own === undefined ? {} : { broke: own }),
  };
}

test('each dialect’s terminal event, after what the reader still held', () => {
  const openai = streamBreakBytes(reader(), OPENAI_ERRORS, 'sse', 'other side closed', 2)?.toString();
  assert.match(
    String(openai),
    /^data: \{"error":\{"message":"the node's answer broke off .*other side closed.*","type":"server_error","param":null,"code":"upstream_stream_broken"\}\}\n\n$/,
  );
  const anthropic = streamBreakBytes(reader('data: {"a"'), ANTHROPIC_ERRORS, 'sse', 'x', 2)?.toString();
  assert.match(
    String(anthropic),
    /^data: \{"a"\n\nevent: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/,
  );
  const ollama = streamBreakBytes(reader(), OLLAMA_ERRORS, 'ndjson', 'x', 0)?.toString();
  assert.match(String(ollama), /^\n\{"error":"the node's answer broke off[^"]*"\}\n$/);
});

test('a translating reader’s own ending is used; with neither, an SSE stream ends with what was held and anything else is closed', () => {
  // In place of flush(): a translation's closing events (what its flush gives) never precede its error.
  const own = streamBreakBytes(
    reader('event: message_stop\n\n', (error) => Buffer.from(`event: error\ndata: ${JSON.stringify(error)}\n\n`)),
    OPENAI_ERRORS,
    'sse',
    'other side closed',
    2,
  );
  assert.equal(String(own), 'event: error\ndata: "other side closed"\n\n');
  assert.equal(streamBreakBytes(reader('tail'), undefined, 'sse', 'x', 2)?.toString(), 'tail');
  assert.equal(streamBreakBytes(reader(), undefined, 'ndjson', 'x', 1), undefined);
});
