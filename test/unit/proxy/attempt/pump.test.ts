// The pump relays a streamed answer to a real client: the chunks one upstream read brings (pushed in
// one tick) leave as one HTTP chunk at the end of that tick, byte for byte and in order; the end, an
// upstream failure and a client that leaves lose or hang nothing, and a full response still pauses
// the node until the client drains it. Real node:http server, raw client socket, 127.0.0.1 port 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { systemClock } from '#src/core/clock.ts';
import { pump, type PumpResult } from '#src/proxy/attempt/pump.ts';
import { UsageWatch } from '#src/proxy/attempt/usage-watch.ts';
import { TestFeed } from '#test/fixtures/test-feed.ts';

/** The response body as the client read it: the chunk frames' data joined, their count, and whether the last chunk came. */
interface Framed {
  readonly body: Buffer;
  readonly chunks: number;
  readonly ended: boolean;
}

function unframe(raw: Buffer): Framed {
  const parts: Buffer[] = [];
  let at = raw.indexOf('\r\n\r\n') + 4;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return { body: Buffer.concat(parts), chunks: parts.length, ended: false };
    const size = Number.parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (size === 0) return { body: Buffer.concat(parts), chunks: parts.length, ended: true };
    if (raw.length < eol + 2 + size + 2) return { body: Buffer.concat(parts), chunks: parts.length, ended: false };
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

interface Relay {
  readonly feed: TestFeed;
  readonly res: ServerResponse;
  readonly result: Promise<PumpResult>;
  readonly client: Socket;
  /** Resolves with what the client read once `done` holds of it (5 s at most). */
  until(done: (framed: Framed) => boolean): Promise<Framed>;
  close(): Promise<void>;
}

/** A server that answers one GET with an SSE head and pumps `feed` into it; `before` sees the response first. */
async function relay(before?: (res: ServerResponse, feed: TestFeed) => void): Promise<Relay> {
  const started = Promise.withResolvers<{ res: ServerResponse; feed: TestFeed; result: Promise<PumpResult> }>();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    const feed = new TestFeed();
    before?.(res, feed);
    const result = pump(feed, res, systemClock, new UsageWatch('sse'));
    started.resolve({ res, feed, result });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  let raw = Buffer.alloc(0);
  const waiting = new Set<() => void>();
  client.on('data', (data: Buffer) => {
    raw = Buffer.concat([raw, data]);
    for (const wake of waiting) wake();
  });
  client.on('error', () => undefined);
  client.write('GET / HTTP/1.1\r\nhost: x\r\n\r\n');
  const { res, feed, result } = await started.promise;
  const until = (done: (framed: Framed) => boolean): Promise<Framed> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; read ${JSON.stringify(unframe(raw))}`)), 5_000);
      const wake = (): void => {
        const framed = unframe(raw);
        if (!done(framed)) return;
        clearTimeout(timer);
        waiting.delete(wake);
        resolve(framed);
      };
      waiting.add(wake);
      wake();
    });
  await until(() => raw.includes('\r\n\r\n'));
  const close = async (): Promise<void> => {
    client.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { feed, res, result, client, until, close };
}

const events = Array.from({ length: 21 }, (_, i) =>
  Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":" tok${i}"}}]}\n\n`),
);
const all = Buffer.concat(events);

test('the events of one upstream read reach the client byte-exact, in order, as one HTTP chunk', async () => {
  const r = await relay();
  try {
    for (const event of events) r.feed.chunk(event);
    const framed = await r.until((f) => f.body.length >= all.length);
    assert.deepEqual(framed.body, all);
    assert.equal(framed.chunks, 1, 'one chunk frame for the read (was one per event)');
    r.feed.end();
    assert.equal((await r.result).ok, true);
    assert.equal((await r.until((f) => f.ended)).chunks, 1);
  } finally {
    await r.close();
  }
});

test('events gathered when the body ends are written before the last chunk, none lost', async () => {
  const r = await relay();
  try {
    for (const event of events) r.feed.chunk(event);
    r.feed.end();
    const result = await r.result;
    assert.equal(result.ok, true);
    const framed = await r.until((f) => f.ended);
    assert.deepEqual(framed.body, all);
    assert.equal(framed.chunks, 1);
  } finally {
    await r.close();
  }
});

test('an upstream failure after gathered events settles the pump with those events written', async () => {
  const r = await relay();
  try {
    for (const event of events.slice(0, 3)) r.feed.chunk(event);
    r.feed.fail('socket reset');
    const result = await r.result;
    assert.deepEqual([result.ok, result.clientGone, result.error.includes('socket reset')], [false, false, true]);
    r.res.end(); // as stream-through ends a broken SSE stream
    assert.deepEqual((await r.until((f) => f.ended)).body, Buffer.concat(events.slice(0, 3)));
  } finally {
    await r.close();
  }
});

test('a client that closes while events wait settles the pump as clientGone, writes nothing more, and hangs nothing', async () => {
  const r = await relay((res, feed) => res.on('close', () => events.forEach((event) => feed.chunk(event))));
  try {
    r.client.destroy();
    const hung = setTimeout(() => assert.fail('pump hung'), 5_000);
    const result = await r.result;
    clearTimeout(hung);
    assert.deepEqual([result.ok, result.clientGone], [false, true]);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      r.feed.controls,
      ['destroy: client closed the connection'],
      'no write to the closed response (it paused the node before)',
    );
  } finally {
    await r.close();
  }
});

test('an event that arrives alone is written at the end of its tick, not later', async () => {
  const r = await relay();
  try {
    const socket = r.res.socket as Socket;
    const before = socket.bytesWritten;
    r.feed.chunk(events[0] as Buffer);
    await new Promise((resolve) => process.nextTick(resolve));
    assert.ok(socket.bytesWritten > before, 'written within the tick');
    assert.deepEqual((await r.until((f) => f.chunks === 1)).body, events[0]);
  } finally {
    await r.close();
  }
});

test('a client that stops reading pauses the node, its drain resumes it, and every byte arrives', async () => {
  const r = await relay();
  try {
    r.client.pause();
    const burst = Array.from({ length: 8 }, (_, i) => Buffer.alloc(1024, 97 + i));
    let pushed = 0;
    // Small bursts, as a slow stream's reads are: the socket's backlog, not the burst, must pause.
    while (!r.feed.controls.includes('pause') && pushed < 256 * 1024 * 1024) {
      for (const part of burst) r.feed.chunk(part);
      pushed += 8 * 1024;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(r.feed.controls.includes('pause'), `paused before ${pushed} bytes`);
    r.client.resume();
    while (!r.feed.controls.includes('resume')) await new Promise((resolve) => setTimeout(resolve, 5));
    r.feed.end();
    assert.equal((await r.result).ok, true);
    const framed = await r.until((f) => f.ended);
    assert.equal(framed.body.length, pushed);
    assert.deepEqual(framed.body.subarray(pushed - 8 * 1024), Buffer.concat(burst));
  } finally {
    await r.close();
  }
});
