// Pure: whether a server of some kind and version holds its own queue of requests that wait for a
// model slot (a llama-server router at --models-max: docs/protocols.md §7.z5). llama.cpp's build
// number is its tree's commit count (`build_info` `b<N>-<commit>`); read from its history:
// e1470ee6a "(router) do not evict busy models" is 10312, dff15d4ac "(router) add LRU scheduler"
// (the queue, #26572) is 10313, first released in tag b10326. No other kind loads models on demand
// behind a limit the gateway routes around.

import type { NodeKind } from '#src/config/index.ts';
import { versionNumbers } from './endpoint-versions.ts';

export type RouterQueueState = 'queues' | 'no_queue' | 'unknown';

export interface RouterQueueFact {
  readonly state: RouterQueueState;
  readonly detail: string;
}

const QUEUE_FIRST: Readonly<Partial<Record<NodeKind, { readonly build: number; readonly release: string }>>> = Object.freeze({
  llamacpp: Object.freeze({ build: 10_313, release: 'b10326' }),
});

/** Whether a router of `kind` stating `version` queues a request that finds it full (and merges those for one model). */
export function routerQueueOf(kind: NodeKind, version: string | undefined): RouterQueueFact {
  const first = QUEUE_FIRST[kind];
  if (first === undefined) return { state: 'no_queue', detail: `a ${kind} node keeps no queue of its own` };
  const numbers = version === undefined ? undefined : versionNumbers(kind, version);
  const build = numbers?.[0];
  if (build === undefined)
    return { state: 'unknown', detail: `its build is ${version === undefined ? 'not stated' : `unreadable (${version})`}` };
  if (build >= first.build)
    return {
      state: 'queues',
      detail: `its build b${build} queues per model itself (from b${first.build}, released ${first.release})`,
    };
  return { state: 'no_queue', detail: `its build b${build} predates the router's own queue (b${first.build})` };
}
