// Pure: the order the gateway's queues for a limited router are served in, swap-aware. Every switch
// costs a load, so requests for the same model go together: a model running (or being loaded) goes
// first and the others by their oldest request, "A B A A C" → "A A A B C". The bound keeps a model
// asked for rarely from starving: once its oldest request has waited `boundMs` (routing.swap_after)
// it goes before the running one. Within a model, its own queue's order (fair-queue.ts) is kept.

export interface WaitingModel {
  readonly model: string;
  /** Monotonic ms its oldest waiting request came in. */
  readonly oldestAtMs: number;
  /** It runs, or is being loaded, on a limited router it waits for: serving it costs no switch. */
  readonly running: boolean;
  /** How long its oldest request may wait behind a running model's traffic (routing.swap_after). */
  readonly boundMs: number;
}

/** The models in the order their queues are tried: overdue ones, then running ones, then the rest, each by oldest request. */
export function swapAwareOrder(models: readonly WaitingModel[], nowMs: number): string[] {
  const rank = (m: WaitingModel): number => (!m.running && nowMs - m.oldestAtMs >= m.boundMs ? 0 : m.running ? 1 : 2);
  return models
    .map((m, index) => ({ m, index, rank: rank(m) }))
    .sort((a, b) => a.rank - b.rank || a.m.oldestAtMs - b.m.oldestAtMs || a.index - b.index)
    .map((entry) => entry.m.model);
}

/** One waiting request, as far as the order goes. */
export interface WaitingRequest {
  readonly model: string;
  readonly atMs: number;
}

/**
 * The order waiting requests (in arrival order) are served in: their models in swapAwareOrder, each
 * model's requests together in arrival order. `running`: the models that cost no switch now.
 */
export function swapAwareRequests<T extends WaitingRequest>(
  requests: readonly T[],
  running: ReadonlySet<string>,
  nowMs: number,
  boundMs: number,
): T[] {
  const byModel = new Map<string, T[]>();
  for (const request of requests) {
    const list = byModel.get(request.model) ?? [];
    list.push(request);
    byModel.set(request.model, list);
  }
  const models = [...byModel].map(([model, list]) => ({
    model,
    oldestAtMs: Math.min(...list.map((r) => r.atMs)),
    running: running.has(model),
    boundMs,
  }));
  return swapAwareOrder(models, nowMs).flatMap((model) => byModel.get(model) ?? []);
}
