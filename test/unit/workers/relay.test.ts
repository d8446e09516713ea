// The owner's relay listener: only this gateway's workers may use it, and a relayed request is
// judged as coming from the client the worker names, with the relay's own headers removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import { request } from 'undici';
import { TableBuilder } from '#src/proxy/index.ts';
import { acceptRelayed } from '#src/workers/relay.ts';

async function relayListener(secret: string): Promise<{ url: string; close: () => Promise<void> }> {
  const table = new TableBuilder();
  table.add('GET', '/who', (req, res) => {
    const seen = {
      address: req.socket.remoteAddress,
      relayHeaders: Object.keys(req.headers).filter((h) => h.startsWith('x-switchyard-relay')),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
  });
  const relayed = acceptRelayed(table.table(), secret);
  const server = createServer((req, res) => {
    const handler = relayed.get(new URL(req.url ?? '/', 'http://x').pathname)?.get(req.method ?? 'GET');
    void handler?.(req, res, new URL(req.url ?? '/', 'http://x'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('a request without the secret, or with a wrong one, is refused 403', async () => {
  const relay = await relayListener('s3cret-value');
  try {
    for (const headers of [{}, { 'x-switchyard-relay': 'guess', 'x-switchyard-relay-peer': '10.0.0.1' }]) {
      const res = await request(`${relay.url}/who`, { headers });
      assert.equal(res.statusCode, 403);
      assert.match(await res.body.text(), /relayed by the gateway/);
    }
  } finally {
    await relay.close();
  }
});

test('a relayed request is seen from the client the worker names, without the relay headers', async () => {
  const relay = await relayListener('s3cret-value');
  try {
    const res = await request(`${relay.url}/who`, {
      headers: { 'x-switchyard-relay': 's3cret-value', 'x-switchyard-relay-peer': '203.0.113.7' },
    });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), { address: '203.0.113.7', relayHeaders: [] });
  } finally {
    await relay.close();
  }
});
