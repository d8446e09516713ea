// Issue 44's batch row: what a batch job running in the fleet's spare capacity costs the requests
// people wait for, and how fast it runs when nobody else does. On two simulated llama.cpp nodes
// (4 slots each, so the gateway knows their free slots) behind a gateway with a state_dir, in its
// own process (bench/processes.ts):
//   1. interactive time to first token (a streamed chat completion, one at a time on a keep-alive
//      socket: bench/first-chunk.ts) on the otherwise idle fleet;
//   2. the same while a batch of `lines` lines runs (created first, measured once its lines fill the
//      slots; cancelled after);
//   3. a batch of `lines` lines alone on the fleet: lines per second from its creation to `completed`.
// The bound: the batch raises an interactive request's time to first token by at most one
// service time (a node's first token plus the answer's tokens: `serviceMs`).
//
// `node bench/batch-yield.ts [--lines N]` prints the result as one JSON line;
// `npm run bench -- --only batch [--batch-lines N]` writes bench/results/batch-latest.{json,md}.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseFleetConfig, startFleet, type Fleet } from '../src/sim/index.ts';
import { waitForModel } from './agent-sessions.ts';
import { measureFirstChunk, type FirstChunkResult } from './first-chunk.ts';
import { sleepMs, startGateway, type GatewayChild } from './processes.ts';

const MODEL = 'm';
const NODES = 2;
const SLOTS = 4;
const TTFT_MS = 40;
const TOKENS_PER_SECOND = 400;
/** Tokens each answer (batch line or interactive request) asks for. */
const MAX_TOKENS = 8;

export interface BatchYieldResult {
  readonly lines: number;
  readonly nodes: number;
  readonly slotsPerNode: number;
  /** One request's time on a node: its first token plus the rest of its answer. */
  readonly serviceMs: number;
  readonly measureS: number;
  readonly idle: FirstChunkResult;
  readonly withBatch: FirstChunkResult & {
    /** Lines of the batch answered while the interactive requests were measured. */
    readonly linesAnsweredMeanwhile: number;
    /** Whether the batch still had lines waiting when the measurement ended (it ran throughout). */
    readonly ranThroughout: boolean;
  };
  /** With the batch less without it, in ms. */
  readonly addedP50Ms: number;
  readonly addedP99Ms: number;
  /** The batch alone on the fleet: lines answered per second, from its creation to `completed`. */
  readonly idleLinesPerSecond: number;
  readonly idleBatchWallS: number;
}

export interface BatchYieldOptions {
  /** Lines per batch (10,000). */
  readonly lines?: number;
  /** Seconds each time-to-first-token measurement runs (10). */
  readonly measureS?: number;
  readonly log?: (line: string) => void;
}

function fleetToml(): string {
  return Array.from(
    { length: NODES },
    (_, i) => `
[[node]]
name = "llama-${i}"
kind = "llamacpp"
models = ["${MODEL}"]
context = 8192
slots = ${SLOTS}
ttft = "${TTFT_MS}ms"
tokens_per_second = ${TOKENS_PER_SECOND}
`,
  ).join('');
}

function gatewayToml(fleet: Fleet, stateDir: string): string {
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    `state_dir = "${stateDir}"`,
    '[health]',
    'interval = "500ms"',
    '[discovery]',
    'interval = "500ms"',
  ];
  for (const node of fleet.nodes) lines.push('[[nodes]]', `name = "${node.name}"`, `url = "${node.url}"`, 'kind = "llamacpp"');
  return `${lines.join('\n')}\n`;
}

async function json<T>(res: Response): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.url} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

interface BatchObject {
  readonly id: string;
  readonly status: string;
  readonly request_counts: { readonly total: number; readonly completed: number; readonly failed: number };
}

/** Uploads `lines` chat lines (POST /v1/files, multipart) and creates a batch of them. */
async function createBatch(url: string, lines: number, tag: string): Promise<BatchObject> {
  const jsonl = Array.from({ length: lines }, (_, i) =>
    JSON.stringify({
      custom_id: `${tag}-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: MODEL, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: `batch line ${i}` }] },
    }),
  ).join('\n');
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), `${tag}.jsonl`);
  const file = await json<{ id: string }>(
    await fetch(`${url}/v1/files`, { method: 'POST', body: form, signal: AbortSignal.timeout(120_000) }),
  );
  return json<BatchObject>(
    await fetch(`${url}/v1/batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      signal: AbortSignal.timeout(120_000),
    }),
  );
}

const retrieve = async (url: string, id: string): Promise<BatchObject> =>
  json<BatchObject>(await fetch(`${url}/v1/batches/${id}`, { signal: AbortSignal.timeout(30_000) }));

/** Polls the batch until `done` says so, bounded. */
async function pollBatch(url: string, id: string, done: (b: BatchObject) => boolean, timeoutMs: number): Promise<BatchObject> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const batch = await retrieve(url, id);
    if (done(batch)) return batch;
    if (performance.now() > deadline)
      throw new Error(
        `batch ${id} did not get there within ${timeoutMs / 1000} s: ${batch.status} ${JSON.stringify(batch.request_counts)}`,
      );
    await sleepMs(100);
  }
}

const answered = (b: BatchObject): number => b.request_counts.completed + b.request_counts.failed;
const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

export async function runBatchYieldBench(options: BatchYieldOptions = {}): Promise<BatchYieldResult> {
  const lines = options.lines ?? 10_000;
  const measureS = options.measureS ?? 10;
  const log = options.log ?? (() => {});
  const parsed = parseFleetConfig(fleetToml());
  if (!parsed.ok) throw new Error(`bad bench fleet: ${parsed.problems.map((p) => p.message).join('; ')}`);
  const fleet = await startFleet(parsed.spec, { host: '127.0.0.1' });
  const stateDir = await mkdtemp(join(tmpdir(), 'switchyard-bench-batch-'));
  let gateway: GatewayChild | undefined;
  try {
    gateway = await startGateway(gatewayToml(fleet, stateDir));
    await waitForModel(gateway, NODES, MODEL);
    const url = gateway.url;
    const body = Buffer.from(
      JSON.stringify({ model: MODEL, stream: true, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'now' }] }),
    );
    log(`batch: interactive time to first token on the idle fleet (${measureS} s)`);
    const idle = await measureFirstChunk(url, '/v1/chat/completions', body, measureS * 1000, 20);

    log(`batch: the same with a ${lines}-line batch running`);
    const flood = await createBatch(url, lines, 'flood');
    // Measured once the batch fills the slots.
    await pollBatch(url, flood.id, (b) => answered(b) >= NODES * SLOTS, 120_000);
    const before = answered(await retrieve(url, flood.id));
    const busy = await measureFirstChunk(url, '/v1/chat/completions', body, measureS * 1000, 5);
    const after = await retrieve(url, flood.id);
    await fetch(`${url}/v1/batches/${flood.id}/cancel`, { method: 'POST', signal: AbortSignal.timeout(30_000) }).then((r) =>
      r.arrayBuffer(),
    );
    await pollBatch(url, flood.id, (b) => ENDED.has(b.status), 120_000);

    log(`batch: a ${lines}-line batch alone on the fleet`);
    const started = performance.now();
    const alone = await createBatch(url, lines, 'alone');
    const ended = await pollBatch(url, alone.id, (b) => ENDED.has(b.status), Math.max(600_000, lines * 200));
    const wallS = (performance.now() - started) / 1000;
    if (ended.status !== 'completed') throw new Error(`the idle batch ended ${ended.status}`);
    return {
      lines,
      nodes: NODES,
      slotsPerNode: SLOTS,
      serviceMs: TTFT_MS + ((MAX_TOKENS - 1) * 1000) / TOKENS_PER_SECOND,
      measureS,
      idle,
      withBatch: {
        ...busy,
        linesAnsweredMeanwhile: answered(after) - before,
        ranThroughout: answered(after) < after.request_counts.total,
      },
      addedP50Ms: busy.p50Ms - idle.p50Ms,
      addedP99Ms: busy.p99Ms - idle.p99Ms,
      idleLinesPerSecond: answered(ended) / wallS,
      idleBatchWallS: wallS,
    };
  } finally {
    await gateway?.stop().catch(() => {});
    await fleet.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

export function renderBatchYield(result: BatchYieldResult | undefined): string {
  if (result === undefined) return '';
  const r = result;
  const row = (name: string, f: FirstChunkResult): string =>
    `| ${name} | ${f.samples} | ${f.p50Ms.toFixed(1)} | ${f.p99Ms.toFixed(1)} |`;
  return [
    '',
    `### Batch in spare capacity: ${r.nodes} llama.cpp sims x ${r.slotsPerNode} slots, one service time ${r.serviceMs.toFixed(1)} ms, batches of ${r.lines} lines`,
    '',
    `Interactive time to first token (streamed chat, one at a time, ${r.measureS} s each):`,
    '',
    '| fleet | requests | TTFT p50 ms | TTFT p99 ms |',
    '|---|---|---|---|',
    row('idle', r.idle),
    row(`${r.lines}-line batch running`, r.withBatch),
    '',
    `Added by the batch: p50 ${r.addedP50Ms.toFixed(1)} ms, p99 ${r.addedP99Ms.toFixed(1)} ms (bound: one service time, ${r.serviceMs.toFixed(1)} ms); ` +
      `the batch answered ${r.withBatch.linesAnsweredMeanwhile} lines meanwhile${r.withBatch.ranThroughout ? '' : ' (and ran out before the measurement ended)'}.`,
    `The batch alone: ${r.idleLinesPerSecond.toFixed(1)} lines/s (${r.lines} lines in ${r.idleBatchWallS.toFixed(1)} s; the fleet's ceiling is ${((r.nodes * r.slotsPerNode * 1000) / r.serviceMs).toFixed(0)} lines/s).`,
    '',
  ].join('\n');
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { lines: { type: 'string', default: '10000' }, measure: { type: 'string', default: '10' } },
  });
  const result = await runBatchYieldBench({
    lines: Number(values.lines),
    measureS: Number(values.measure),
    log: (line) => void process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdout.write(renderBatchYield(result));
}
