// The upstream of the ten-thousand-streams workload (bench/streams-10k.ts): a minimal node:http
// server, written for the bench, that answers every streamed chat completion with TOKENS SSE
// events at one every INTERVAL ms (20 tokens/s by default), then `data: [DONE]`, each after an SSE
// comment `: t=<µs>` saying when it was written (stampLine). Each stream's
// bytes are a pure function of the stream's id (the body's `"user"`) and the event's index
// (streamEvent), so the client can check every stream byte for byte without keeping it.
// The simulator (src/sim) is not used: it models a GPU's slots, prefill and KV budget per request,
// which is not what this row measures, and its per-request work would be the bottleneck long
// before 10,000 streams (node bench/upstream-choice.ts measures that at closed-loop load).
// Run as its own process: `node bench/stream-upstream.ts --tokens 300 --interval 50` prints one
// JSON line `{"event":"stream upstream ready","url":...}` and serves until SIGTERM.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BENCH_MODEL } from './upstream.ts';

/** The bytes of event `index` of stream `id` (index === tokens: the `[DONE]` event). */
export function streamEvent(id: string, index: number, tokens: number): string {
  if (index >= tokens) return 'data: [DONE]\n\n';
  const chunk = {
    id: `chatcmpl-${id}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: BENCH_MODEL,
    choices: [{ index: 0, delta: { content: ` ${id}-t${index}` }, finish_reason: index === tokens - 1 ? 'stop' : null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** Microseconds since the epoch, comparable across the bench's processes (one machine). */
export function wallMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * The SSE comment line sent before each event: when the upstream wrote it, so the client times
 * each event's trip (direct vs through the gateway, same clocks) rather than only the gaps.
 */
export function stampLine(us: number): string {
  return `: t=${us}\n`;
}

/** Pure: the stamp at the start of `text` — its µs and length; 'partial' when its line has not all arrived; undefined when `text` does not start with one. */
export function readStamp(text: string): { us: number; length: number } | 'partial' | undefined {
  const match = /^: t=(\d+)\n/.exec(text);
  if (match !== null) return { us: Number(match[1]), length: match[0].length };
  if (text.includes('\n')) return undefined;
  return ': t='.startsWith(text) || /^: t=\d*$/.test(text) ? 'partial' : undefined;
}

/** The stream id a request body names (`"user":"sN"`), or undefined. */
export function streamId(body: string): string | undefined {
  return /"user"\s*:\s*"(s\d+)"/.exec(body)?.[1];
}

const MODELS_BODY = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: [
      { id: BENCH_MODEL, object: 'model', created: 1_700_000_000, owned_by: 'vllm', root: BENCH_MODEL, max_model_len: 131072 },
    ],
  }),
);

interface Counts {
  count: number;
  /** Answers whose connection closed before their last event (the gateway's side of the relay broke). */
  cutShort: number;
}

function stream(res: ServerResponse, id: string, tokens: number, intervalMs: number, open: Counts): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  open.count += 1;
  let index = 0;
  const timer = setInterval(() => {
    res.write(stampLine(wallMicros()) + streamEvent(id, index, tokens));
    index += 1;
    if (index > tokens) {
      clearInterval(timer);
      res.end();
    }
  }, intervalMs);
  res.once('close', () => {
    clearInterval(timer);
    if (!res.writableFinished) open.cutShort += 1;
    open.count -= 1;
  });
}

function answer(req: IncomingMessage, res: ServerResponse, tokens: number, intervalMs: number, open: Counts): void {
  const path = req.url ?? '/';
  if (req.method === 'GET' && (path === '/health' || path === '/v1/health')) {
    res.writeHead(200, { 'content-length': 0 });
    res.end();
    return;
  }
  if (req.method === 'GET' && path === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': MODELS_BODY.length });
    res.end(MODELS_BODY);
    return;
  }
  if (req.method === 'GET' && path === '/open') {
    const body = JSON.stringify({ open: open.count, cutShort: open.cutShort });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  if (req.method !== 'POST' || !path.startsWith('/v1/')) {
    res.writeHead(404, { 'content-length': 0 });
    res.end();
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const id = streamId(Buffer.concat(chunks).toString('utf8'));
    if (id === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('the body names no stream id ("user":"sN")');
      return;
    }
    stream(res, id, tokens, intervalMs, open);
  });
}

async function main(argv: readonly string[]): Promise<void> {
  const flag = (name: string, fallback: number): number => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const tokens = flag('tokens', 300);
  const intervalMs = flag('interval', 50);
  const open: Counts = { count: 0, cutShort: 0 };
  const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0 }, (req, res) =>
    answer(req, res, tokens, intervalMs, open),
  );
  server.maxConnections = Infinity;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 16_384 }, resolve));
  const address = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ event: 'stream upstream ready', url: `http://127.0.0.1:${address.port}` })}\n`);
  const stop = (): void => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.main) await main(process.argv.slice(2));
