// I/O: asks a node for its per-model context and slots, the way its kind answers (src/kinds/). The
// cardinal rule: a llama-server router LOADS a model it is asked about unless that model is loaded,
// so only models the listing shows as loaded are asked for, and the kind adds its own guard.
// A router is asked for at most `requestsPerPoll` models per poll (capacity-round.ts),
// PROPS_CONCURRENCY at a time, all within one `timeoutMs`, so one node's poll stays small.

import type { Dispatcher } from 'undici';
import { deadline } from '#src/core/deadline.ts';
import type { NodeSpec } from '#src/config/types.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { serverKind, type CapacityAnswer, type PerModelDialect } from '#src/kinds/index.ts';
import { afterRound, FIRST_ROUND, idsToAsk, type RouterRound } from './capacity-round.ts';
import { NO_CAPACITY, type ModelContext, type NodeCapacity, type RouterLimits } from './node-capacity.ts';

const NOT_ASKED = Symbol('not asked');

/** Per-model requests to one router a poll has in flight at most. */
export const PROPS_CONCURRENCY = 4;

export interface FetchCapacityOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
  /** Per-model requests per poll at most (a router's other loaded models wait their turn). */
  readonly requestsPerPoll: number;
  /** Where the router's turns stood after the previous poll of this node. */
  readonly round: RouterRound;
}

export interface CapacityReading {
  readonly capacity: NodeCapacity;
  /** The router's turns after this poll; FIRST_ROUND for every other answer. */
  readonly round: RouterRound;
}

type Get = (path: string, signal: AbortSignal | undefined) => Promise<JsonAnswer>;

const UNKNOWN: CapacityReading = { capacity: NO_CAPACITY, round: FIRST_ROUND };

/** The ids a router may be asked about: only those its listing shows as loaded. */
export function loadedIdsOf(models: readonly DiscoveredModel[]): string[] {
  return models.filter((m) => m.loaded).map((m) => m.id);
}

export async function fetchCapacity(
  node: NodeSpec,
  models: readonly DiscoveredModel[],
  options: FetchCapacityOptions,
): Promise<CapacityReading> {
  const dialect = serverKind(node.kind).capacity;
  if (dialect === undefined) return UNKNOWN;
  const get: Get = (path, signal) =>
    requestBoundedJson(node.url + path, {
      dispatcher: options.dispatcher,
      headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      signal,
    });
  const first = await get(dialect.path, options.signal);
  const answer: CapacityAnswer | undefined = first.ok ? dialect.parse(first.body) : undefined;
  if (answer === undefined) return UNKNOWN;
  switch (answer.shape) {
    case 'loaded':
      return {
        capacity: { role: 'unknown', host: undefined, models: answer.models, loadedIds: answer.loadedIds },
        round: FIRST_ROUND,
      };
    case 'single':
      return { capacity: { role: 'single', host: answer.host, models: {}, loadedIds: undefined }, round: FIRST_ROUND };
    case 'router':
      if (dialect.perModel === undefined) return UNKNOWN;
      return withLimits(await pollRouter(dialect.perModel, loadedIdsOf(models), get, options), answer.limits);
  }
}

function withLimits(reading: CapacityReading, limits: RouterLimits | undefined): CapacityReading {
  return limits === undefined ? reading : { ...reading, capacity: { ...reading.capacity, router: limits } };
}

async function pollRouter(
  perModel: PerModelDialect,
  loadedIds: readonly string[],
  get: Get,
  options: FetchCapacityOptions,
): Promise<CapacityReading> {
  const ask = idsToAsk(loadedIds, options.round.lastAsked, options.requestsPerPoll);
  // One deadline for the whole round: models not asked by then keep their figures for a later poll.
  const bound = deadline(options.timeoutMs, options.signal);
  const roundSignal = bound.signal;
  const answers = await askInTurn(ask, roundSignal, async (id) => {
    const answer = await get(perModel.path(id), roundSignal);
    // A failed or malformed answer leaves the id without a figure; the host stays healthy.
    return answer.ok ? perModel.parse(answer.body) : undefined;
  }).finally(() => bound.done());
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
