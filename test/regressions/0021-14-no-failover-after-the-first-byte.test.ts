// Issue 21, item 14 (d): the mid-stream fault test counted what clients saw, and a gateway that
// re-sent a request to another node after the first byte had gone out still passed it (the client's
// stream was already ended, so the second answer went nowhere — but that node did the work twice
// over, and a non-idempotent request would run twice). After the first byte, a request is never
// sent to a node again: here every node breaks its stream after two chunks, and each client request
// reaches exactly one node, once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { CHAT, startScriptedNode, startTestGateway, type InferenceScript } from '#test/fixtures/scripted-node.ts';
import { httpJson } from '#test/fixtures/http.ts';
import type { HostsReport } from '#src/admin/index.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const REQUESTS = 4;

/** Two SSE chunks, then the connection is cut without an end. */
const breaksMidStream: InferenceScript = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (text: string): string =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text } }] })}\n\n`;
  res.write(chunk('one'));
  res.write(chunk('two'), () => setImmediate(() => res.socket?.destroy()));
};

test('a stream a node breaks after the first byte is ended for the client and never re-sent to another node', async () => {
  const a = await startScriptedNode(breaksMidStream);
  const b = await startScriptedNode(breaksMidStream);
  const gw = await startTestGateway([
    { name: 'a', url: a.url },
    { name: 'b', url: b.url },
  ]);
  try {
    for (let i = 0; i < REQUESTS; i++) {
      const res = await request(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...CHAT, stream: true }),
      });
      assert.equal(res.statusCode, 200);
      const text = await res.body.text();
      assert.match(text, /"one"[\s\S]*"two"/, 'the client got what the node sent before it broke');
    }
    // Every lease is back: any attempt the gateway made has reached its node by now.
    await untilEvent(
      async () =>
        (await httpJson('GET', `${gw.url}/admin/hosts`))
          .json<HostsReport>()
          .hosts.every((h) => h.in_flight === 0 && Object.keys(h.leases).length === 0),
      [nodeChanges(gw)],
      'every request finished',
    );
    assert.equal(
      a.seen.requests + b.seen.requests,
      REQUESTS,
      `one upstream request per client request (a got ${a.seen.requests}, b got ${b.seen.requests})`,
    );
  } finally {
    await gw.close();
    await a.close();
    await b.close();
  }
});
