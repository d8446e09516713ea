// The zero-think-time upstream the benchmark proxies to: a minimal node:http server with prebuilt
// answers, so the ceiling ("direct") measures the network path and not a simulated model.
// Run as its own process: `node bench/upstream.ts [--port N]` prints one JSON line
// `{"event":"upstream ready","url":...}` on stdout and serves until SIGTERM.
//
//   GET  /health, /v1/health       200, empty
//   GET  /v1/models                vLLM-shaped list with one model (BENCH_MODEL)
//   POST /v1/chat/completions      body read in full; `"stream":true` anywhere in it → 20 SSE
//                                  chunks + [DONE], written back to back; else a 1 KB JSON answer
//
// `--usage-nulls`: a stream asked for its usage (`"include_usage":true` in the body, which the
// gateway adds for a vLLM-kind node) answers as vLLM and OpenAI do then: `"usage":null` last on
// every chunk, and a usage chunk (`"choices":[]`) before [DONE].
// `--delay-ms N`: each completion is answered N ms after its body is read (AIGatewayBench's mock
// upstream answers after ~22 ms: bench/side-by-side.ts).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const BENCH_MODEL = 'bench-model';
export const SSE_CHUNKS = 20;
export const JSON_ANSWER_BYTES = 1024;

/** A chat.completion object padded to exactly `bytes` bytes of JSON. */
export function jsonAnswer(bytes: number): Buffer {
  const shell = (text: string): string =>
    JSON.stringify({
      id: 'chatcmpl-bench0000000000000000000000000000',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: BENCH_MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 200, total_tokens: 212 },
    });
  const bare = shell('').length;
  return Buffer.from(shell('x'.repeat(Math.max(0, bytes - bare))));
}

/** The SSE events of one streamed answer, `count` token chunks then `data: [DONE]`; `usageAsked`: as vLLM answers `include_usage`. */
export function sseEvents(count: number, usageAsked = false): Buffer[] {
  const events: Buffer[] = [];
  for (let i = 0; i < count; i += 1) {
    const chunk = {
      id: 'chatcmpl-bench0000000000000000000000000000',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: BENCH_MODEL,
      choices: [{ index: 0, delta: { content: ` tok${i}` }, finish_reason: i === count - 1 ? 'stop' : null }],
      ...(usageAsked ? { usage: null } : {}),
    };
    events.push(Buffer.from(`data: ${JSON.stringify(chunk)}\n\n`));
  }
  if (usageAsked) {
    const usage = {
      id: 'chatcmpl-bench0000000000000000000000000000',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: BENCH_MODEL,
      choices: [],
      usage: { prompt_tokens: 12, completion_tokens: count, total_tokens: 12 + count },
    };
    events.push(Buffer.from(`data: ${JSON.stringify(usage)}\n\n`));
  }
  events.push(Buffer.from('data: [DONE]\n\n'));
  return events;
}

const MODELS_BODY = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: [
      { id: BENCH_MODEL, object: 'model', created: 1_700_000_000, owned_by: 'vllm', root: BENCH_MODEL, max_model_len: 131072 },
    ],
  }),
);
const STREAM_MARKER = Buffer.from('"stream":true');
const USAGE_MARKER = Buffer.from('"include_usage":true');

/** The prebuilt answers; `sseAsked`: the stream for a body asking its usage (--usage-nulls), else `sse` for all. */
interface Answers {
  readonly json: Buffer;
  readonly sse: readonly Buffer[];
  readonly sseAsked: readonly Buffer[] | undefined;
  /** Think time before a completion's answer (0: at once). */
  readonly delayMs: number;
}

function answer(req: IncomingMessage, res: ServerResponse, answers: Answers): void {
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
  if (req.method !== 'POST' || !path.startsWith('/v1/')) {
    res.writeHead(404, { 'content-length': 0 });
    res.end();
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
    if (answers.delayMs > 0) setTimeout(() => complete(body, res, answers), answers.delayMs);
    else complete(body, res, answers);
  });
}

/** A completion's answer: the stream when the body asks for one, else the JSON answer. */
function complete(body: Buffer, res: ServerResponse, answers: Answers): void {
  if (body.indexOf(STREAM_MARKER) >= 0) {
    const sse = answers.sseAsked !== undefined && body.indexOf(USAGE_MARKER) >= 0 ? answers.sseAsked : answers.sse;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of sse) res.write(event);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answers.json.length });
  res.end(answers.json);
}

export interface UpstreamOptions {
  /** 0 = any free port. */
  readonly port?: number;
  /** A stream asked for its usage answers as vLLM does (`--usage-nulls`). */
  readonly usageNulls?: boolean;
  /** Think time before each completion's answer, ms (`--delay-ms`: AIGatewayBench's mock upstream answers after 22). */
  readonly delayMs?: number;
}

export interface RunningUpstream {
  readonly url: string;
  close(): Promise<void>;
}

/** The upstream on 127.0.0.1, in this process (bench/footprint.ts measures a proxy beside it). */
export async function startUpstream(options: UpstreamOptions = {}): Promise<RunningUpstream> {
  const answers: Answers = {
    json: jsonAnswer(JSON_ANSWER_BYTES),
    sse: sseEvents(SSE_CHUNKS),
    sseAsked: options.usageNulls === true ? sseEvents(SSE_CHUNKS, true) : undefined,
    delayMs: options.delayMs ?? 0,
  };
  const server = createServer({ keepAliveTimeout: 120_000, requestTimeout: 0 }, (req, res) => answer(req, res, answers));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function main(argv: readonly string[]): Promise<void> {
  const portFlag = argv.indexOf('--port');
  const port = portFlag >= 0 ? Number(argv[portFlag + 1]) : 0;
  const delayFlag = argv.indexOf('--delay-ms');
  const delayMs = delayFlag >= 0 ? Number(argv[delayFlag + 1]) : 0;
  const upstream = await startUpstream({ port, usageNulls: argv.includes('--usage-nulls'), delayMs });
  process.stdout.write(`${JSON.stringify({ event: 'upstream ready', url: upstream.url })}\n`);
  const stop = (): void => void upstream.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (import.meta.main) await main(process.argv.slice(2));
