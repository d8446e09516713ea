// The kind-neutral vocabulary of a node's pushed model state (a llama-server router's `GET
// /models/sse`, llamacpp-events.ts): what one frame says happened to one model, as discovery reads it.

/** How far a load or a download has come. */
export interface ModelProgress {
  /** `load` (a child reading its weights; `stage` names the file set) or `download`. */
  readonly kind: 'load' | 'download';
  /** The load stage the router names (`text_model`, `mmproj_model`, `spec_model`); absent for downloads. */
  readonly stage?: string;
  /** 0..1; absent = not said. */
  readonly fraction?: number;
  /** Downloads: bytes done and total over every file; absent = not said. */
  readonly doneBytes?: number;
  readonly totalBytes?: number;
}

export type ModelEvent =
  /** The model's status changed (a load started or progressed, loaded, slept, unloaded, failed). */
  | {
      readonly kind: 'status';
      readonly model: string;
      /** The gateway's status word: the router's own value, or `failed` for an unload with a non-zero exit code. */
      readonly status: string;
      readonly exitCode?: number;
      readonly progress?: ModelProgress;
    }
  /** A download progressed (the model is `downloading`). */
  | { readonly kind: 'download'; readonly model: string; readonly progress: ModelProgress }
  /** A download ended: `downloaded` (ok) or failed; the router lists the model anew at its next models reload. */
  | { readonly kind: 'download_end'; readonly model: string; readonly ok: boolean }
  /** The model was removed from the node. */
  | { readonly kind: 'removed'; readonly model: string }
  /** The node re-read its model sources: the listing itself must be read again. */
  | { readonly kind: 'relist' };

export type ModelEventReading =
  { readonly ok: true; readonly event: ModelEvent } | { readonly ok: false; readonly error: string } | { readonly ok: 'ignored' };

export interface ModelEventsDialect {
  /** The GET of the event stream (server-sent events, `data:` lines). */
  readonly path: string;
  /** One frame's `data` (parsed JSON) read. Pure. */
  read(data: unknown): ModelEventReading;
}
