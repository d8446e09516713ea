// One health probe over HTTP (I/O only). Each kind is asked the way it answers: its module in
// src/kinds/ names the paths, tried in order.

import type { NodeSpec } from '#src/config/types.ts';
import { boundedExchange, type ExchangeDispatcher } from '#src/core/bounded-exchange.ts';
import { deadline } from '#src/core/deadline.ts';
import { serverKind } from '#src/kinds/index.ts';
import type { ProbeOutcome } from './health-state.ts';

/** Bytes of a probe answer we read before giving up on it (the body itself is not used). */
const MAX_PROBE_BODY_BYTES = 64 * 1024;

export interface ProbeOptions {
  readonly dispatcher: ExchangeDispatcher;
  readonly timeoutMs: number;
  readonly monotonicMs: () => number;
  readonly signal?: AbortSignal;
}

export async function probeNode(node: NodeSpec, options: ProbeOptions): Promise<ProbeOutcome> {
  const started = options.monotonicMs();
  const bound = deadline(options.timeoutMs, options.signal);
  const paths = serverKind(node.kind).healthPaths;
  let lastError = 'no probe path';
  try {
    for (const [index, path] of paths.entries()) {
      const isLast = index === paths.length - 1;
      try {
        const status = await getStatus(node, path, options.dispatcher, bound.signal);
        if (status >= 200 && status < 300) return { ok: true, latencyMs: options.monotonicMs() - started };
        lastError = `GET ${path} answered ${status}`;
        // Only a missing route is worth a second path; a 503 means "not ready" and is final.
        if (status !== 404 || isLast) return { ok: false, error: lastError };
      } catch (error) {
        return {
          ok: false,
          error: bound.timedOut ? `GET ${path} timed out after ${options.timeoutMs}ms` : describe(error, path),
        };
      }
    }
    return { ok: false, error: lastError };
  } finally {
    bound.done();
  }
}

async function getStatus(node: NodeSpec, path: string, dispatcher: ExchangeDispatcher, signal: AbortSignal): Promise<number> {
  const url = new URL(node.url + path);
  const headers: Record<string, string> = {};
  if (node.apiKey !== undefined) headers.authorization = `Bearer ${node.apiKey}`;
  // The body is not used: drained without keeping it (a longer one closes the connection instead).
  const answer = await boundedExchange(
    dispatcher,
    { origin: url.origin, path: url.pathname + url.search, method: 'GET', headers },
    { maxBytes: MAX_PROBE_BODY_BYTES, discard: true, signal },
  );
  // A body that broke off after the head still answered; an abort (the time bound) did not.
  if (answer.kind === 'failed' && (answer.status === undefined || signal.aborted)) throw answer.error;
  return answer.status ?? 0;
}

function describe(error: unknown, path: string): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `GET ${path} failed: ${code ?? error.name}${error.message ? ` (${error.message})` : ''}`;
  }
  return `GET ${path} failed: ${String(error)}`;
}
