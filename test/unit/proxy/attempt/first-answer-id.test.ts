// The id of a streamed answer read from its first event as it passes (first-answer-id.ts): a chat
// chunk's `id`, `response.created`'s `response.id`; told once, whatever the chunking; nothing for
// an event that names no answer; the bytes pass unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { answerIdOfEvent, FirstIdWatch } from '#src/proxy/attempt/first-answer-id.ts';
import { UsageWatch } from '#src/proxy/attempt/usage-watch.ts';

test('answerIdOfEvent: a chat chunk, a Responses opening, and nothing else', () => {
  assert.equal(answerIdOfEvent('{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[]}'), 'chatcmpl-1');
  assert.equal(
    answerIdOfEvent('{"type":"response.created","response":{"id":"resp_9","object":"response","status":"in_progress"}}'),
    'resp_9',
  );
  assert.equal(answerIdOfEvent('{"id":"msg_1","type":"message_start"}'), undefined);
  assert.equal(answerIdOfEvent('[DONE]'), undefined);
  assert.equal(answerIdOfEvent(`{"id":"${'x'.repeat(600)}","object":"chat.completion.chunk"}`), undefined);
});

test('FirstIdWatch: told once, at every chunking of the first event; the bytes pass as they came', () => {
  const stream =
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"delta":{"role":"assistant"}}]}\n\n' +
    'data: {"id":"chatcmpl-abc","object":"chat.completion.chunk","choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';
  const bytes = Buffer.from(stream);
  for (let cut = 1; cut < bytes.length; cut += 7) {
    const told: string[] = [];
    const watch = new FirstIdWatch(new UsageWatch('sse'), (id) => told.push(id));
    const out = Buffer.concat([watch.pass(bytes.subarray(0, cut)), watch.pass(bytes.subarray(cut))]);
    assert.deepEqual(told, ['chatcmpl-abc'], `cut at ${cut}`);
    assert.equal(out.toString(), stream);
  }
});

test('FirstIdWatch: a first event over its bound is not read', () => {
  const told: string[] = [];
  const watch = new FirstIdWatch(new UsageWatch('sse'), (id) => told.push(id));
  watch.pass(Buffer.from(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","pad":"${'x'.repeat(5000)}"}\n\n`));
  assert.deepEqual(told, []);
});

test('FirstIdWatch has an ending of a broken stream only where its inner reader has one', () => {
  assert.equal(new FirstIdWatch(new UsageWatch('sse'), () => {}).broke, undefined);
  const inner = Object.assign(new UsageWatch('sse'), { broke: (error: string) => Buffer.from(`end: ${error}`) });
  assert.equal(new FirstIdWatch(inner, () => {}).broke?.('cut')?.toString(), 'end: cut');
});
