// I/O: one load or unload through the node kind's own API (model-ops.ts), then confirmed: the
// confirming GET is asked every `confirmEveryMs` until the model is in the wanted state, the node
// says the load failed, or `timeoutMs` (the whole operation) runs out. Every exchange is bounded in
// time and bytes. Never throws.

import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import type { NodeSpec } from '#src/config/index.ts';
import type { ModelAction, ModelOps } from '#src/kinds/index.ts';

export interface ModelOpOptions {
  readonly dispatcher: Dispatcher;
  readonly clock: Clock;
  /** The whole operation, confirmation included (routing.load_timeout for a load). */
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly confirmEveryMs: number;
  /**
   * A request for the model reached the node since the operation was sent (an unload's model is
   * loaded again by it): the confirmation ends there, the operation done.
   */
  readonly superseded?: () => boolean;
}

export type ModelOpResult =
  { readonly ok: true; readonly already: boolean; readonly detail: string } | { readonly ok: false; readonly reason: string };

function headersOf(node: NodeSpec): Record<string, string> {
  return node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` };
}

/**
 * A router lists a model `loading` from the moment it accepts the load (PROTOCOLS.md §1.4), Ollama
 * answers a load once loaded: a model seen `unloaded` on this many confirmations in a row after an
 * accepted load was dropped (the node restarted, or lost it), and waiting on is pointless.
 */
export const LOST_LOAD_CONFIRMATIONS = 5;

const pause = (clock: Clock, ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(resolve, ms));

export async function runModelOp(
  node: NodeSpec,
  ops: ModelOps,
  action: ModelAction,
  model: string,
  options: ModelOpOptions,
): Promise<ModelOpResult> {
  const started = options.clock.monotonicMs();
  const left = (): number => options.timeoutMs - (options.clock.monotonicMs() - started);
  const base = node.url.replace(/\/+$/, '');
  const request = ops.request(action, model);
  const sent = await requestBoundedJson(base + request.path, {
    dispatcher: options.dispatcher,
    method: 'POST',
    body: JSON.stringify(request.body),
    headers: headersOf(node),
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
  });
  if (!sent.ok && sent.status === undefined) return { ok: false, reason: `POST ${request.path}: ${sent.error}` };
  const answer = ops.answer(action, sent.status ?? 0, sent.ok ? sent.body : undefined);
  if (answer.kind === 'refused') return { ok: false, reason: `POST ${request.path} refused: ${answer.reason}` };
  const wanted = action === 'load' ? 'loaded' : 'unloaded';
  let last = 'no answer yet';
  let unloadedInARow = 0;
  for (;;) {
    const budget = left();
    if (budget <= 0) return { ok: false, reason: `not ${wanted} within ${options.timeoutMs}ms (last seen: ${last})` };
    const seen = await requestBoundedJson(base + ops.confirmPath, {
      dispatcher: options.dispatcher,
      headers: headersOf(node),
      timeoutMs: budget,
      maxBytes: options.maxBytes,
    });
    const state = seen.ok ? ops.observe(seen.body, model) : undefined;
    last = seen.ok ? (state ?? 'an unreadable answer') : seen.error;
    // A router lists a model whose child exited non-zero as `unloaded` + `failed`: unloaded all the same.
    if (state === wanted || (action === 'unload' && state === 'failed'))
      return {
        ok: true,
        already: answer.kind === 'already',
        detail:
          answer.kind === 'already' ? `the node says it is already ${wanted}` : `${wanted} (confirmed by GET ${ops.confirmPath})`,
      };
    if (action === 'unload' && options.superseded?.() === true)
      return { ok: true, already: false, detail: 'unloaded; a request since has loaded it again' };
    if (action === 'load' && state === 'failed')
      return { ok: false, reason: `the node says the load failed (GET ${ops.confirmPath})` };
    unloadedInARow = action === 'load' && state === 'unloaded' ? unloadedInARow + 1 : 0;
    if (unloadedInARow >= LOST_LOAD_CONFIRMATIONS)
      return {
        ok: false,
        reason: `the node accepted the load but lists the model unloaded since (${unloadedInARow} looks in a row): it restarted or dropped the load`,
      };
    await pause(options.clock, Math.min(options.confirmEveryMs, Math.max(1, left())));
  }
}
