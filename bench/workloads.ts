// The workloads: the same request bodies and connection counts for every target.

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BENCH_MODEL, SSE_CHUNKS } from './upstream.ts';

export type WorkloadName = 'json' | 'sse' | 'body10k';

export interface Workload {
  readonly name: WorkloadName;
  readonly title: string;
  readonly path: string;
  readonly body: Buffer;
  /** SSE chunks expected in the answer; undefined for a JSON answer. */
  readonly sseChunks: number | undefined;
}

export const CONCURRENCIES = [1, 64] as const;
export const TEN_KB = 10 * 1024;

/** Streams ask for as many tokens as the upstream sends chunks (so the simulator sends as many too). */
function chatBody(content: string, stream: boolean): string {
  const maxTokens = stream ? SSE_CHUNKS : 200;
  return JSON.stringify({
    model: BENCH_MODEL,
    messages: [{ role: 'user', content }],
    max_tokens: maxTokens,
    ...(stream ? { stream: true } : {}),
  });
}

/** A chat body of exactly `bytes` bytes (the user message is padded). */
export function paddedChatBody(bytes: number): string {
  const bare = chatBody('', false).length;
  return chatBody('lorem ipsum '.repeat(Math.ceil(bytes / 12)).slice(0, Math.max(0, bytes - bare)), false);
}

export function workloads(sseChunks: number = SSE_CHUNKS): readonly Workload[] {
  const path = '/v1/chat/completions';
  return [
    {
      name: 'json',
      title: 'JSON chat completion, 1 KB answer',
      path,
      body: Buffer.from(chatBody('Say something short.', false)),
      sseChunks: undefined,
    },
    {
      name: 'sse',
      title: `SSE stream, ${sseChunks} chunks`,
      path,
      body: Buffer.from(chatBody('Say something short.', true)),
      sseChunks,
    },
    {
      name: 'body10k',
      title: '10 KB request body, 1 KB answer',
      path,
      body: Buffer.from(paddedChatBody(TEN_KB)),
      sseChunks: undefined,
    },
  ];
}

/** Writes each body to `dir` (the load generators read bodies from files); name → path. */
export async function writeBodies(dir: string, list: readonly Workload[]): Promise<ReadonlyMap<WorkloadName, string>> {
  const files = new Map<WorkloadName, string>();
  for (const w of list) {
    const file = join(dir, `${w.name}.json`);
    await writeFile(file, w.body);
    files.set(w.name, file);
  }
  return files;
}
