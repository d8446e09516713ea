// A lightweight stand-in for a large fleet's control plane: N nodes, each on its own port (as
// distinct hosts would be), answering only GET /health (empty 200) and GET /v1/models (a
// prebuilt vLLM-shaped list of M models). One process; for the discovery/health loop benchmark.
//
// `node bench/fleet-server.ts --nodes 1000 --models 50` prints one JSON line
// `{"event":"fleet ready","urls":[...],"stats":URL}`; GET {stats} answers the request and
// connection counts.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

function modelList(nodeIndex: number, models: number): Buffer {
  const data = [];
  for (let k = 0; k < models; k += 1) {
    const id = `m${(nodeIndex + k) % (models * 2)}`;
    data.push({ id, object: 'model', created: 1_700_000_000, owned_by: 'vllm', root: id, parent: null, max_model_len: 8192 });
  }
  return Buffer.from(JSON.stringify({ object: 'list', data }));
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function main(argv: readonly string[]): Promise<void> {
  const flag = (name: string, fallback: number): number => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const nodeCount = flag('nodes', 1000);
  const modelCount = flag('models', 50);
  const counts = { health: 0, models: 0, other: 0, connections: 0 };
  const servers: Server[] = [];
  const urls: string[] = [];
  for (let i = 0; i < nodeCount; i += 1) {
    const models = modelList(i, modelCount);
    const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
      if (req.url === '/health') {
        counts.health += 1;
        res.writeHead(200, { 'content-length': 0 });
        res.end();
      } else if (req.url === '/v1/models') {
        counts.models += 1;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': models.length });
        res.end(models);
      } else {
        counts.other += 1;
        res.writeHead(404, { 'content-length': 0 });
        res.end();
      }
    });
    server.on('connection', () => (counts.connections += 1));
    servers.push(server);
    urls.push(`http://127.0.0.1:${await listen(server)}`);
  }
  const control = createServer((_req, res) => {
    const body = JSON.stringify(counts);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  servers.push(control);
  const stats = `http://127.0.0.1:${await listen(control)}/stats`;
  process.stdout.write(`${JSON.stringify({ event: 'fleet ready', urls, stats })}\n`);
  const stop = (): void => {
    for (const server of servers) {
      server.close();
      server.closeAllConnections();
    }
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.main) await main(process.argv.slice(2));
