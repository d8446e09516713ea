// Issue 28, lean process: each control loop polled a node through its own agent, so every node held
// four keep-alive connections (health, listing, capacity, load): 4,000 sockets and ~12 MB of heap at
// 1,000 nodes. A node's listing, the capacity requests of its round and its load scrape now share
// one connection; the health probe keeps its own, so that a slow listing never delays a probe.
// Checked by the connections one node sees over several rounds of every poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';

test(
  'one node’s listing, capacity and load polls share one connection; its health probe has the other',
  { timeout: 60_000 },
  async () => {
    const seen = { connections: 0, health: 0, models: 0, metrics: 0 };
    const enough = Promise.withResolvers<void>();
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      req.resume();
      if (req.url === '/health') seen.health += 1;
      else if (req.url === '/v1/models') seen.models += 1;
      else if (req.url === '/metrics') seen.metrics += 1;
      if (seen.health >= 3 && seen.models >= 3 && seen.metrics >= 3) enough.resolve();
      if (req.url === '/v1/models') {
        const body = JSON.stringify({
          object: 'list',
          data: [{ id: 'm', object: 'model', owned_by: 'vllm', max_model_len: 4096 }],
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      } else if (req.url === '/metrics') {
        const body = 'vllm:num_requests_running{model_name="m"} 0\nvllm:num_requests_waiting{model_name="m"} 0\n';
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
      } else {
        res.writeHead(200, { 'content-length': 0 }).end();
      }
    });
    server.on('connection', () => (seen.connections += 1));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gateway = await startInProcessGateway(
      [
        '[server]',
        'listen = "127.0.0.1:0"',
        '[health]',
        'interval = "100ms"',
        '[discovery]',
        'interval = "100ms"',
        '[load]',
        'interval = "100ms"',
        '[[nodes]]',
        'name = "a"',
        `url = "${url}"`,
        'kind = "vllm"',
        '',
      ].join('\n'),
    );
    try {
      await enough.promise;
      assert.ok(
        seen.connections <= 2,
        `the node saw ${seen.connections} connections for ${seen.health} probes, ${seen.models} listings and ${seen.metrics} load scrapes (want ≤ 2)`,
      );
    } finally {
      await gateway.close();
      server.closeAllConnections();
      server.close();
    }
  },
);
