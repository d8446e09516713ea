// I/O: asks a node for its per-model context and slots, the way its kind answers. The cardinal rule:
// on a llama-server router, `/props?model=X` LOADS X unless X is loaded, so only models the
// listing shows as loaded are asked for, and `autoload=false` is added as a second guard.

import type { Dispatcher } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { NO_CAPACITY, type ModelContext, type NodeCapacity } from './node-capacity.ts';
import { parseLlamaProps, parseOllamaPs } from './parse-capacity.ts';

export interface FetchCapacityOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
}

/** The /props paths to ask for a router's loaded models; exported so tests can check the rule. */
export function routerPropsPaths(models: readonly DiscoveredModel[]): string[] {
  return models.filter((m) => m.loaded).map((m) => `/props?model=${encodeURIComponent(m.id)}&autoload=false`);
}

export async function fetchCapacity(
  node: NodeSpec,
  models: readonly DiscoveredModel[],
  options: FetchCapacityOptions,
): Promise<NodeCapacity> {
  const get = (path: string) =>
    requestBoundedJson(node.url + path, {
      dispatcher: options.dispatcher,
      headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      signal: options.signal,
    });

  if (node.kind === 'ollama') {
    const answer = await get('/api/ps');
    const ps = answer.ok ? parseOllamaPs(answer.body) : undefined;
    return ps === undefined ? NO_CAPACITY : { role: 'unknown', host: undefined, models: ps.models, loadedIds: ps.loadedIds };
  }
  if (node.kind !== 'llamacpp' && node.kind !== 'auto') return NO_CAPACITY;

  const plain = await get('/props');
  const props = plain.ok ? parseLlamaProps(plain.body) : undefined;
  if (props === undefined) return NO_CAPACITY;
  if (props.role === 'single') return { role: 'single', host: props.context, models: {}, loadedIds: undefined };

  const perModel: Record<string, ModelContext> = {};
  const loaded = models.filter((m) => m.loaded);
  const paths = routerPropsPaths(loaded);
  const answers = await Promise.all(paths.map((path) => get(path)));
  answers.forEach((answer, index) => {
    const model = loaded[index];
    const reading = answer.ok ? parseLlamaProps(answer.body) : undefined;
    // A failed or malformed answer leaves the id absent; the host stays healthy.
    if (model !== undefined && reading?.context !== undefined) perModel[model.id] = reading.context;
  });
  return { role: 'router', host: undefined, models: perModel, loadedIds: undefined };
}
