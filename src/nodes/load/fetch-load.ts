// I/O: one scrape of a node's /metrics for its load, the way its kind exports it: the kind says
// which GETs (`loadPaths`: a llama-server router is asked per model its listing shows as loaded,
// asking about any other would load it), at most MAX_ROUTER_MODELS models per scrape, all within
// one timeout.

import type { Dispatcher } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { deadline } from '#src/core/deadline.ts';
import { addLoadFigures, readLoadFigures, serverKind, type LoadFigures } from '#src/kinds/index.ts';
import type { NodeView } from '../node.ts';
import type { LoadScrape } from './load-reading.ts';

/** Loaded models of one router asked per scrape; the load of any further ones is not counted. */
export const MAX_ROUTER_MODELS = 16;

export interface FetchLoadOptions {
  readonly dispatcher: Dispatcher;
  /** Bound on the whole scrape, every request of it. */
  readonly timeoutMs: number;
  /** Bound on each answer. */
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
}

/**
 * Undefined when there is nothing to ask: the node's kind exports no load metrics, or says to wait
 * (a llama.cpp node whose role is not known yet: a router answers a plain `/metrics` with 400, so
 * it waits for its first capacity poll).
 */
export async function fetchLoad(
  node: NodeSpec,
  view: NodeView | undefined,
  options: FetchLoadOptions,
): Promise<LoadScrape | undefined> {
  const kind = serverKind(node.kind);
  const dialect = kind.load;
  const loaded = (view?.discovery.models ?? [])
    .filter((m) => m.loaded)
    .slice(0, MAX_ROUTER_MODELS)
    .map((m) => m.id);
  const paths = kind.loadPaths(view?.capacity.role ?? 'unknown', loaded);
  if (dialect === undefined || paths === undefined) return undefined;
  const bound = deadline(options.timeoutMs, options.signal);
  const parts: LoadFigures[] = [];
  try {
    for (const path of paths) {
      const answer = await requestBoundedText(node.url + path, {
        dispatcher: options.dispatcher,
        headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
        timeoutMs: options.timeoutMs,
        maxBytes: options.maxBytes,
        signal: bound.signal,
      });
      if (!answer.ok) return { ok: false, error: answer.error };
      if (answer.status !== 200) return { ok: false, error: `${path.split('?')[0]} answered HTTP ${answer.status}` };
      const figures = readLoadFigures(answer.text, dialect);
      if (figures === undefined) return { ok: false, error: 'no load gauges in /metrics' };
      parts.push(figures);
    }
  } finally {
    bound.done();
  }
  // A router with nothing loaded runs nothing.
  return { ok: true, figures: addLoadFigures(parts) };
}
