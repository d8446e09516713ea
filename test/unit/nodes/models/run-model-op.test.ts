// A load the node accepted but lists `unloaded` since (it restarted, or dropped the load) ends as
// failed after a few confirmations, not at load_timeout; a load listed `loading` then `loaded` is
// confirmed. Against a loopback HTTP server playing a llama-server router.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { systemClock } from '#src/core/clock.ts';
import { serverKind } from '#src/kinds/index.ts';
import { LOST_LOAD_CONFIRMATIONS, runModelOp } from '#src/nodes/models/run-model-op.ts';
import { spec } from '#test/fixtures/builders.ts';

async function routerAnswering(listed: () => string): Promise<{ server: Server; url: string; looks: () => number }> {
  let looks = 0;
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.method === 'POST') {
      res.end('{"success":true}');
      return;
    }
    looks += 1;
    res.end(JSON.stringify({ data: [{ id: 'm', aliases: [], status: { value: listed() } }], object: 'list' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}`, looks: () => looks };
}

const ops = serverKind('llamacpp').modelOps('router');

test('a load listed unloaded again and again after it was accepted fails at once, naming why', async () => {
  assert.ok(ops !== undefined);
  const router = await routerAnswering(() => 'unloaded');
  const agent = new Agent();
  try {
    const result = await runModelOp(spec('r', { url: router.url, kind: 'llamacpp' }), ops, 'load', 'm', {
      dispatcher: agent,
      clock: systemClock,
      timeoutMs: 60_000,
      maxBytes: 65_536,
      confirmEveryMs: 5,
    });
    assert.equal(result.ok, false);
    assert.ok(!result.ok && /lists the model unloaded since/.test(result.reason), JSON.stringify(result));
    assert.equal(router.looks(), LOST_LOAD_CONFIRMATIONS);
  } finally {
    await agent.close();
    router.server.close();
  }
});

test('a load listed loading, then loaded, is confirmed', async () => {
  assert.ok(ops !== undefined);
  let n = 0;
  const router = await routerAnswering(() => (++n < 3 ? 'loading' : 'loaded'));
  const agent = new Agent();
  try {
    const result = await runModelOp(spec('r', { url: router.url, kind: 'llamacpp' }), ops, 'load', 'm', {
      dispatcher: agent,
      clock: systemClock,
      timeoutMs: 60_000,
      maxBytes: 65_536,
      confirmEveryMs: 5,
    });
    assert.equal(result.ok, true, JSON.stringify(result));
  } finally {
    await agent.close();
    router.server.close();
  }
});
