// A llama-server router's downloads (`POST /models {"model": "<hf repo>"}`, b10573-14): the router
// starts a download child, lists the model `downloading` (no progress in the listing: the child's
// progress reaches only the event stream), sends `download_progress` frames (at most ten a second per
// file), then `download_finished` and marks it `downloaded`. The next read of its models re-reads its
// sources: the entry becomes an ordinary `unloaded` model and `models_reload` goes out. Here a
// download takes ten steps of 100 ms on the node's clock; the model is shaped like the node's first.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { ResolvedModel, ResolvedNode } from '#src/sim/spec.ts';
import type { RouterEventHub } from '#src/sim/kinds/llamacpp-router-events.ts';

const STEPS = 10;
const STEP_MS = 100;

interface Download {
  readonly model: ResolvedModel;
  status: 'downloading' | 'downloaded';
  done: number;
  timer: Timer | undefined;
}

export class RouterDownloads {
  readonly #node: ResolvedNode;
  readonly #clock: Clock;
  readonly #hub: RouterEventHub;
  readonly #downloads = new Map<string, Download>();

  constructor(node: ResolvedNode, clock: Clock, hub: RouterEventHub) {
    this.#node = node;
    this.#clock = clock;
    this.#hub = hub;
  }

  /** Starts a download; false when the name is taken. */
  start(id: string, known: boolean): boolean {
    if (known || this.#downloads.has(id)) return false;
    const template = this.#node.models[0];
    const model: ResolvedModel = {
      id,
      aliases: [],
      contextTokens: template?.contextTokens ?? 4096,
      slots: template?.slots ?? 1,
      status: 'unloaded',
      sizeBytes: template?.sizeBytes ?? 1_000_000_000,
      failsToLoad: false,
    };
    const download: Download = { model, status: 'downloading', done: 0, timer: undefined };
    this.#downloads.set(id, download);
    this.#hub.broadcast({ model: id, event: 'model_status', data: { status: 'downloading' } });
    this.#step(download);
    return true;
  }

  /** The downloads the listing shows (`downloading`, or `downloaded` until the next re-read). */
  listed(): readonly { readonly model: ResolvedModel; readonly status: string }[] {
    return [...this.#downloads.values()].map((d) => ({ model: d.model, status: d.status }));
  }

  /** The router's `load_models()` before a listing: finished downloads become models; `models_reload` when any did. */
  reread(add: (model: ResolvedModel) => void): void {
    const finished = [...this.#downloads.values()].filter((d) => d.status === 'downloaded');
    if (finished.length === 0) return;
    for (const download of finished) {
      this.#downloads.delete(download.model.id);
      add(download.model);
    }
    this.#hub.broadcast({ model: '*', event: 'models_reload' });
  }

  close(): void {
    for (const download of this.#downloads.values()) download.timer?.cancel();
  }

  #step(download: Download): void {
    download.timer = this.#clock.setTimeout(() => {
      download.done += 1;
      const total = download.model.sizeBytes;
      const url = `https://huggingface.co/${download.model.id}/resolve/main/model.gguf`;
      const done = Math.round((total * download.done) / STEPS);
      this.#hub.broadcast({
        model: download.model.id,
        event: 'download_progress',
        data: { progress: { [url]: { done, total } } },
      });
      if (download.done < STEPS) {
        this.#step(download);
        return;
      }
      download.timer = undefined;
      download.status = 'downloaded';
      this.#hub.broadcast({ model: download.model.id, event: 'download_finished' });
    }, STEP_MS);
  }
}
