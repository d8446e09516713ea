// The dispatch handler of one upstream request, against a real loopback server: the head and the
// body arrive through it, an interim 103 is skipped, and an abort reaches the request wherever it
// is (before sending, waiting for its connection, mid-answer).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import type { BodySink } from '#src/proxy/attempt/attempt-exchange.ts';
import { signalSource } from '#src/proxy/attempt/abort-source.ts';
import type { AbortSource } from '#src/proxy/attempt/abort-source.ts';
import { UpstreamCall, type UpstreamHead } from '#src/proxy/attempt/forward.ts';

let server: Server;
let origin: string;
const held: ServerResponse[] = [];

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hints') res.writeEarlyHints({ link: '</a.css>; rel=preload' });
    if (req.url === '/hold') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n');
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'x-node': 'n1' });
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const res of held.splice(0)) res.end();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function read(call: UpstreamCall): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sink: BodySink = {
      onData: (c) => void chunks.push(c),
      onEnd: () => resolve(Buffer.concat(chunks).toString()),
      onError: reject,
    };
    call.attach(sink);
  });
}

/** A call sent on `pool`, its head (told to a listener: the attempt's, in forward.ts) as a promise. */
function sent(abort: AbortSource, pool: Pool, path: string): { call: UpstreamCall; head: Promise<UpstreamHead> } {
  const { promise, resolve, reject } = Promise.withResolvers<UpstreamHead>();
  const call = new UpstreamCall(abort, { onHead: (status, headers) => resolve({ status, headers }), onNoHead: reject });
  call.send(pool, line(path));
  return { call, head: promise };
}

const line = (path: string) => ({ path, headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') });

for (const path of ['/json', '/hints']) {
  test(`the head and the whole body come through the handler (${path})`, async () => {
    const pool = new Pool(origin);
    try {
      const { call, head } = sent(signalSource(new AbortController().signal), pool, path);
      const answered = await head;
      assert.equal(answered.status, 200);
      assert.equal(answered.headers['x-node'], 'n1');
      assert.equal(await read(call), '{"ok":true}');
    } finally {
      await pool.close();
    }
  });
}

test('an abort before sending fails the head at once, and nothing is sent', async () => {
  const pool = new Pool(origin);
  try {
    const controller = new AbortController();
    controller.abort(new Error('client left'));
    const { head } = sent(signalSource(controller.signal), pool, '/json');
    await assert.rejects(head, /client left/);
    assert.equal(pool.stats.connected, 0);
  } finally {
    await pool.close();
  }
});

test('an abort while the request waits for its connection takes it out of the queue', async () => {
  // A connection that never completes: undici is still connecting when the client leaves.
  const pool = new Pool('http://127.0.0.1:9', {
    connect: (_opts, callback) => void setTimeout(() => callback(new Error('late'), null), 60_000).unref(),
  });
  try {
    const controller = new AbortController();
    const { head } = sent(signalSource(controller.signal), pool, '/json');
    controller.abort(new Error('client left'));
    await assert.rejects(head, /client left/);
    assert.equal(pool.stats.pending, 0);
  } finally {
    await pool.destroy();
  }
});

test('an abort mid-answer reaches the reader as the body failure', async () => {
  const pool = new Pool(origin);
  try {
    const controller = new AbortController();
    const { call, head } = sent(signalSource(controller.signal), pool, '/hold');
    assert.equal((await head).status, 200);
    const body = read(call);
    controller.abort(new Error('total timeout'));
    await assert.rejects(body, /total timeout/);
  } finally {
    await pool.destroy();
  }
});
