// What crosses between the owner and the request workers per request: the messages by type, the
// postMessage batches (each one wakes the other thread) and their size (JSON length, what the
// structured clone walks), each way, for a gateway with `[server] workers = 2` in this process in
// front of the benchmark upstream, with the bench's one node plus `--nodes N − 1` more (down: they
// answer no probe, but their views are part of every fleet push). Counted at
// Worker.prototype.postMessage (owner → worker) and at the Worker's 'message' events (worker → owner).
//
//   node bench/workers-messages.ts [--connections 32] [--requests 2000] [--nodes 1]
//
// Prints one JSON line.

import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { startInProcessGateway } from '#test/fixtures/in-process.ts';
import { proxyGatewayConfig } from './processes.ts';
import { BENCH_MODEL, startUpstream } from './upstream.ts';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '32' },
    requests: { type: 'string', default: '2000' },
    nodes: { type: 'string', default: '1' },
  },
});
const connections = Number(values.connections);
const requests = Number(values.requests);
const nodes = Number(values.nodes);

interface Tally {
  batches: number;
  bytes: number;
  byType: Map<string, number>;
}
const tally = (): Tally => ({ batches: 0, bytes: 0, byType: new Map() });
const counts = { toWorker: tally(), fromWorker: tally() };
const count = (into: Tally, batch: unknown): void => {
  if (!Array.isArray(batch)) return;
  into.batches += 1;
  for (const message of batch as { t: string }[]) {
    into.byType.set(message.t, (into.byType.get(message.t) ?? 0) + 1);
    into.bytes += JSON.stringify(message).length;
  }
};
const post = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (this: Worker, value: unknown, transfer?: never) {
  count(counts.toWorker, value);
  post.call(this, value, transfer);
};
const emit = Worker.prototype.emit;
Worker.prototype.emit = function (this: Worker, name: string | symbol, ...args: unknown[]): boolean {
  if (name === 'message') count(counts.fromWorker, args[0]);
  return emit.call(this, name, ...args);
};

const upstream = await startUpstream();
// More nodes on other loopback addresses at the upstream's port: nothing listens there, so they are down.
const more = Array.from({ length: Math.max(0, nodes - 1) }, (_, i) => {
  const url = upstream.url.replace('127.0.0.1', `127.0.${Math.floor((i + 1) / 250)}.${((i + 1) % 250) + 1}`);
  return `[[nodes]]\nname = "n${i + 1}"\nurl = "${url}"\nkind = "vllm"\n`;
});
const gateway = await startInProcessGateway(proxyGatewayConfig(upstream.url, 2) + more.join(''));
const pool = new Pool(gateway.url, { connections });
const body = JSON.stringify({ model: BENCH_MODEL, messages: [{ role: 'user', content: 'Say something short.' }] });
const one = async (): Promise<void> => {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body,
  });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
};
try {
  for (let i = 0; i < 50; i += 1) await one();
  // What start-up and the warm-up sent is not counted.
  await new Promise((resolve) => setTimeout(resolve, 200));
  counts.toWorker = tally();
  counts.fromWorker = tally();
  let left = requests;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (left > 0) {
        left -= 1;
        await one();
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const per = (t: Tally) => ({
    batches: t.batches / requests,
    bytes: Math.round(t.bytes / requests),
    messages: Object.fromEntries([...t.byType].map(([type, n]) => [type, Math.round((n / requests) * 1000) / 1000])),
  });
  process.stdout.write(
    `${JSON.stringify({ connections, requests, nodes, perRequest: { toWorker: per(counts.toWorker), fromWorker: per(counts.fromWorker) } })}\n`,
  );
} finally {
  await pool.close();
  await gateway.close();
  await upstream.close();
}
