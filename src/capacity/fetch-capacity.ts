// I/O: asks a node for its per-model context and slots, the way its kind answers. The cardinal rule:
// on a llama-server router, `/props?model=X` LOADS X unless X is loaded, so only models the
// listing shows as loaded are asked for, and `autoload=false` is added as a second guard.
// A router is asked for at most `requestsPerPoll` models per poll (capacity-round.ts),
// PROPS_CONCURRENCY at a time, all within one `timeoutMs`, so one node's poll stays small.

import type { Dispatcher } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { afterRound, FIRST_ROUND, idsToAsk, type RouterRound } from './capacity-round.ts';
import { NO_CAPACITY, type ModelContext, type NodeCapacity } from './node-capacity.ts';
import { parseLlamaProps, parseOllamaPs } from './parse-capacity.ts';

const NOT_ASKED = Symbol('not asked');

/** Per-model `/props` requests one node has in flight at most. */
export const PROPS_CONCURRENCY = 4;

export interface FetchCapacityOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  /** Per-model `/props` requests per poll at most (a router's other loaded models wait their turn). */
  readonly requestsPerPoll: number;
  /** Where the router's turns stood after the previous poll of this node. */
  readonly round: RouterRound;
}

export interface CapacityReading {
  readonly capacity: NodeCapacity;
  /** The router's turns after this poll; FIRST_ROUND for every other kind. */
  readonly round: RouterRound;
}

/** The /props path that asks a router about one model without loading it. */
export function routerPropsPath(modelId: string): string {
  return `/props?model=${encodeURIComponent(modelId)}&autoload=false`;
}

/** The /props paths to ask for a router's loaded models; exported so tests can check the rule. */
export function routerPropsPaths(models: readonly DiscoveredModel[]): string[] {
  return models.filter((m) => m.loaded).map((m) => routerPropsPath(m.id));
}

export async function fetchCapacity(
  node: NodeSpec,
  models: readonly DiscoveredModel[],
  options: FetchCapacityOptions,
): Promise<CapacityReading> {
  const get = (path: string, signal: AbortSignal | undefined): Promise<JsonAnswer> =>
    requestBoundedJson(node.url + path, {
      dispatcher: options.dispatcher,
      headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      signal,
    });
  const unknown: CapacityReading = { capacity: NO_CAPACITY, round: FIRST_ROUND };

  if (node.kind === 'ollama') {
    const answer = await get('/api/ps', options.signal);
    const ps = answer.ok ? parseOllamaPs(answer.body) : undefined;
    if (ps === undefined) return unknown;
    return { capacity: { role: 'unknown', host: undefined, models: ps.models, loadedIds: ps.loadedIds }, round: FIRST_ROUND };
  }
  if (node.kind !== 'llamacpp' && node.kind !== 'auto') return unknown;

  const plain = await get('/props', options.signal);
  const props = plain.ok ? parseLlamaProps(plain.body) : undefined;
  if (props === undefined) return unknown;
  if (props.role === 'single') return { capacity: { role: 'single', host: props.context, models: {}, loadedIds: undefined }, round: FIRST_ROUND };

  const loadedIds = models.filter((m) => m.loaded).map((m) => m.id);
  const ask = idsToAsk(loadedIds, options.round.lastAsked, options.requestsPerPoll);
  // One deadline for the whole round: models not asked by then keep their figures for a later poll.
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const roundSignal = options.signal === undefined ? deadline : AbortSignal.any([deadline, options.signal]);
  const answers = await askInTurn(ask, roundSignal, async (id) => {
    const answer = await get(routerPropsPath(id), roundSignal);
    // A failed or malformed answer leaves the id without a figure; the host stays healthy.
    return answer.ok ? parseLlamaProps(answer.body)?.context : undefined;
  });
  const round = afterRound(options.round, loadedIds, answers);
  return { capacity: { role: 'router', host: undefined, models: round.figures, loadedIds: undefined }, round };
}

/**
 * Asks `ids` in order, PROPS_CONCURRENCY at a time, until done or `signal` aborts. The answers, in
 * the order asked, hold only ids whose exchange finished before the abort.
 */
async function askInTurn(
  ids: readonly string[],
  signal: AbortSignal,
  ask: (id: string) => Promise<ModelContext | undefined>,
): Promise<Map<string, ModelContext | undefined>> {
  const results: (ModelContext | undefined | typeof NOT_ASKED)[] = ids.map(() => NOT_ASKED);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ids.length && !signal.aborted) {
      const index = next++;
      const id = ids[index];
      if (id === undefined) return;
      const figure = await ask(id);
      if (!signal.aborted) results[index] = figure;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROPS_CONCURRENCY, ids.length) }, worker));
  const answers = new Map<string, ModelContext | undefined>();
  ids.forEach((id, index) => {
    const result = results[index];
    if (result !== NOT_ASKED) answers.set(id, result);
  });
  return answers;
}
