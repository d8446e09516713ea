// The reader of a translated stream (src/proxy/translate/translated-stream.ts): the node's chunks,
// cut anywhere, give whole translated events; the inner reader still sees every node byte (usage and
// token counts); the end closes the client's stream, a break ends it with the terminal error event.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { UsageWatch } from '#src/proxy/attempt/usage-watch.ts';
import { TranslatedStream } from '#src/proxy/translate/translated-stream.ts';
import { MESSAGES_OVER_CHAT } from '#src/translate/messages/messages-translation.ts';

const CONTEXT = { requestId: 'r', model: 'm', nowSeconds: 1 };
const MEMO = { stopSequences: [], thinkingOff: false };
const NODE =
  'data: {"choices":[{"index":0,"delta":{"content":"héllo"},"finish_reason":null}]}\n\n' +
  'data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n' +
  'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}}\n\n' +
  'data: [DONE]\n\n';

const names = (text: string): string[] => [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1] ?? '');

test('chunks cut mid-event and mid-character still give whole events, and the usage is read', () => {
  const bytes = Buffer.from(NODE, 'utf8');
  for (const size of [1, 3, 7, 64, bytes.length]) {
    const reader = new TranslatedStream(MESSAGES_OVER_CHAT.stream(MEMO, CONTEXT), new UsageWatch('sse'));
    let out = '';
    const parts: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) parts.push(reader.pass(bytes.subarray(at, at + size)));
    parts.push(reader.flush());
    out = Buffer.concat(parts).toString('utf8');
    assert.deepEqual(
      names(out),
      [
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
      `chunks of ${size}`,
    );
    assert.match(out, /"text":"héllo"/);
    assert.deepEqual(reader.usage('whole'), { promptTokens: 9, completionTokens: 2, counted: 'usage' });
    assert.equal(reader.seenTokens(), 2);
  }
});

test('a stream broken after bytes ends with Anthropic’s error event, not a closing message', () => {
  const reader = new TranslatedStream(MESSAGES_OVER_CHAT.stream(MEMO, CONTEXT), new UsageWatch('sse'));
  reader.pass(Buffer.from(NODE.split('\n\n')[0] + '\n\n'));
  const last = reader.broke('socket hang up').toString('utf8');
  assert.deepEqual(names(last), ['error']);
  assert.match(last, /"type":"error","error":\{"type":"api_error","message":"the node's stream broke off: socket hang up"\}/);
});
