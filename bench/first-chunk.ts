// Time to first chunk of an SSE answer, measured by a bare keep-alive socket (no HTTP client
// library in the way): the time from writing the request to the first body byte after the
// headers. One request at a time; every target gets the same client.
// Also the sanity check every target passes before it is measured.

import { connect, type Socket } from 'node:net';
import { percentile } from './stats.ts';

export interface FirstChunkResult {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('\r\n0\r\n\r\n');

export async function measureFirstChunk(
  baseUrl: string,
  path: string,
  body: Buffer,
  durationMs: number,
  warmup = 200,
): Promise<FirstChunkResult> {
  const url = new URL(baseUrl);
  const socket = await open(url);
  const head = Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
  );
  const request = Buffer.concat([head, body]);
  const times: number[] = [];
  try {
    for (let i = 0; i < warmup; i += 1) await exchange(socket, request);
    const end = performance.now() + durationMs;
    while (performance.now() < end) times.push(await exchange(socket, request));
  } finally {
    socket.destroy();
  }
  return { samples: times.length, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99) };
}

function open(url: URL): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** One request; resolves with ms to the first body byte once the whole (chunked) answer is in. */
function exchange(socket: Socket, request: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    let firstChunkMs: number | undefined;
    const started = performance.now();
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const headerEnd = received.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      if (firstChunkMs === undefined && received.length > headerEnd + HEADER_END.length)
        firstChunkMs = performance.now() - started;
      const status = received.subarray(9, 12).toString();
      if (status !== '200') return finish(new Error(`status ${status}: ${received.toString().slice(0, 300)}`));
      if (received.length >= CHUNKED_END.length && received.subarray(received.length - CHUNKED_END.length).equals(CHUNKED_END)) {
        finish(undefined);
      }
    };
    const onError = (error: Error): void => finish(error);
    const onClose = (): void => finish(new Error('connection closed mid-answer'));
    const finish = (error: Error | undefined): void => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      if (error !== undefined) reject(error);
      else resolve(firstChunkMs ?? performance.now() - started);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.write(request);
  });
}

/** Before measuring: the target answers 200 with the right shape (a whole JSON object, or every SSE event). */
export async function checkTarget(
  baseUrl: string,
  path: string,
  body: Buffer,
  sseEvents: number | undefined,
  headers: Readonly<Record<string, string>> = {},
): Promise<void> {
  const response = await fetch(new URL(path, baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${baseUrl}${path} answered ${response.status}: ${text.slice(0, 300)}`);
  if (sseEvents === undefined) {
    const parsed = JSON.parse(text) as { object?: unknown };
    if (parsed.object !== 'chat.completion') throw new Error(`${baseUrl}${path}: not a chat.completion`);
    return;
  }
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  if (events.length !== sseEvents + 1 || events.at(-1) !== 'data: [DONE]') {
    throw new Error(`${baseUrl}${path}: expected ${sseEvents} SSE chunks and [DONE], got ${events.length} events`);
  }
}
