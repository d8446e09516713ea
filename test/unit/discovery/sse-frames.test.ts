// Server-sent events cut into frames, bounded in bytes: split anywhere, joined data lines, comments
// and other fields read past, a frame over the bound (or bytes waiting for its end) stops it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseFrames } from '#src/discovery/index.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

test('frames split across chunks, at any byte, come out whole', () => {
  const text = 'data: {"a":1}\n\n: comment\n\nevent: x\nid: 3\ndata: {"b":\ndata: 2}\r\n\r\ndata: é\n\n';
  const whole = bytes(text);
  for (let cut = 0; cut <= whole.length; cut++) {
    const frames = new SseFrames(1024);
    const first = frames.push(whole.subarray(0, cut));
    const second = frames.push(whole.subarray(cut));
    assert.ok(first.ok && second.ok);
    assert.deepEqual([...first.frames, ...second.frames], ['{"a":1}', '{"b":\n2}', 'é'], `cut at ${cut}`);
  }
});

test('a frame longer than the bound stops the splitter, whole or still open', () => {
  assert.deepEqual(new SseFrames(16).push(bytes(`data: ${'x'.repeat(20)}\n\n`)), {
    ok: false,
    error: 'a frame exceeds the limit of 16 bytes',
  });
  const open = new SseFrames(16);
  assert.deepEqual(open.push(bytes('data: 0123456')), { ok: true, frames: [] });
  assert.equal(open.push(bytes('789abcdef')).ok, false);
});
