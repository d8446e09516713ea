// A llama-server router's pushed model state, `GET /models/sse` (llama.cpp tools/server/server-models.cpp
// at b10573-14; docs/protocols.md "Pushed model state"): every change of a model's status goes to each
// open stream as one `data: {"model","event","data"}` frame, no `event:` line, no keep-alive:
//   model_status {status: "loading"} when a load starts (the router's `load()`),
//   status_change {status: "loading", progress: {stages, current, value}} as the child reads its weights,
//   status_change {status: "loaded", info: <the child's model info>} once it answers (no info on a wake),
//   status_change {status: "sleeping"} when it sleeps,
//   status_change {status: "unloaded", exit_code} when it goes down: 0 unloaded, non-zero failed,
//   download_progress {progress: {<url>: {done, total}}}, download_finished / download_failed (no data),
//   models_reload (model "*", no data) once the router re-read its sources (a finished download listed).
// Test knobs (POST /__sim/model): `flood` sends `count` frames at once, `oversize` one frame of `bytes`,
// `drop` ends every stream (the connection closes as when the router restarts).

import type { SimExchange } from '#src/sim/exchange.ts';
import { untilAborted } from '#src/sim/exchange.ts';
import type { ResidentChange } from '#src/sim/resident-models.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import type { ResponseWriter } from '#src/sim/response-writer.ts';
import { llamaModelMeta } from '#src/sim/kinds/llamacpp-shapes.ts';

export interface RouterFrame {
  readonly model: string;
  readonly event: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/** The load stages a text-only child reports (no mmproj, no draft model). */
const STAGES: readonly string[] = Object.freeze(['text_model']);

export class RouterEventHub {
  readonly #streams = new Set<ResponseWriter>();

  /** Holds one `GET /models/sse` open until its client leaves; every frame broadcast meanwhile reaches it. */
  async serve(exchange: SimExchange): Promise<void> {
    const { writer } = exchange;
    writer.openStream(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    this.#streams.add(writer);
    try {
      await untilAborted(exchange.signal);
    } finally {
      this.#streams.delete(writer);
    }
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  broadcast(frame: RouterFrame): void {
    for (const writer of this.#streams) writer.event({ data: frame });
  }

  /** The frames a change of a model's residency makes, as the router sends them. */
  changed(change: ResidentChange, model: ResolvedModel | undefined): void {
    for (const frame of framesOf(change, model)) this.broadcast(frame);
  }

  /** Ends every stream (the router went away): clients see the stream end and reconnect. */
  dropAll(): void {
    for (const writer of this.#streams) writer.endStream();
    this.#streams.clear();
  }
}

export function framesOf(change: ResidentChange, model: ResolvedModel | undefined): RouterFrame[] {
  const id = change.id;
  switch (change.kind) {
    case 'started':
      return [{ model: id, event: 'model_status', data: { status: 'loading' } }];
    case 'progress':
      return [
        {
          model: id,
          event: 'status_change',
          data: { status: 'loading', progress: { stages: STAGES, current: STAGES[0], value: change.value } },
        },
      ];
    case 'status':
      // The router's own `load()` frame stands for the start; the child's progress follows.
      if (change.status === 'loading') return [];
      if (change.status === 'unloaded')
        return [{ model: id, event: 'status_change', data: { status: 'unloaded', exit_code: change.exitCode } }];
      if (change.status === 'loaded' && !change.woke && model !== undefined)
        return [{ model: id, event: 'status_change', data: { status: 'loaded', info: modelInfo(model) } }];
      return [{ model: id, event: 'status_change', data: { status: change.status } }];
  }
}

/** The child's model info (`get_res_model_info`) as its ready report carries it. */
function modelInfo(model: ResolvedModel): Record<string, unknown> {
  return {
    id: model.id,
    aliases: [...model.aliases],
    tags: [],
    object: 'model',
    created: 0,
    owned_by: 'llamacpp',
    meta: llamaModelMeta(model),
  };
}
