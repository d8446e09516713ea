// A llama-server router's pushed model state: `GET /models/sse` (llama.cpp tools/server, read at
// b10573-14, commit 3f545bec; docs/protocols.md "Pushed model state"). Every frame is one
// `data: {"model":…,"event":…,"data":{…}}` line pair, no `event:` field, no id, no keep-alive:
//   model_status     a load (or a download) started: data {status: "loading" | "downloading"}
//   status_change    data {status, exit_code (only with "unloaded"), info (child's model info, on
//                    "loaded"), progress ({stages, current, value} while "loading")}
//   download_progress data {progress: {<url>: {done, total}}}
//   download_finished / download_failed   no data
//   model_remove     no data
//   models_reload    model "*", no data
// An unload with a non-zero exit code is a child that failed (crashed, or died loading): the router
// lists it `unloaded` with `failed: true, exit_code`; the gateway calls it `failed`.

import { isRecord } from '#src/core/is-record.ts';
import type { ModelEvent, ModelEventReading, ModelEventsDialect, ModelProgress } from './model-event-shapes.ts';

export const ROUTER_EVENTS_PATH = '/models/sse';

const IGNORED: ModelEventReading = { ok: 'ignored' };

export const LLAMACPP_ROUTER_EVENTS: ModelEventsDialect = Object.freeze({
  path: ROUTER_EVENTS_PATH,
  read: readRouterFrame,
});

export function readRouterFrame(raw: unknown): ModelEventReading {
  if (!isRecord(raw)) return { ok: false, error: 'frame is not a JSON object' };
  const { model, event, data } = raw;
  if (typeof event !== 'string') return { ok: false, error: "frame has no string 'event'" };
  if (event === 'models_reload') return ok({ kind: 'relist' });
  if (typeof model !== 'string' || model === '') return { ok: false, error: `'${event}' frame has no model name` };
  switch (event) {
    case 'model_status':
    case 'status_change':
      return statusFrame(model, data);
    case 'download_progress': {
      const progress = downloadProgress(data);
      return ok(
        progress === undefined ? { kind: 'status', model, status: 'downloading' } : { kind: 'download', model, progress },
      );
    }
    case 'download_finished':
      return ok({ kind: 'download_end', model, ok: true });
    case 'download_failed':
      return ok({ kind: 'download_end', model, ok: false });
    case 'model_remove':
      return ok({ kind: 'removed', model });
    default:
      // A later build's event: not an error, nothing to apply (the poll still checks).
      return IGNORED;
  }
}

function statusFrame(model: string, data: unknown): ModelEventReading {
  const status = isRecord(data) ? data['status'] : undefined;
  if (typeof status !== 'string' || status === '') return { ok: false, error: `status frame for '${model}' has no status` };
  const exit = isRecord(data) ? data['exit_code'] : undefined;
  const exitCode = typeof exit === 'number' && Number.isInteger(exit) ? exit : undefined;
  if (status === 'unloaded' && exitCode !== undefined && exitCode !== 0)
    return ok({ kind: 'status', model, status: 'failed', exitCode });
  const progress = status === 'loading' && isRecord(data) ? loadProgress(data['progress']) : undefined;
  return ok(progress === undefined ? { kind: 'status', model, status } : { kind: 'status', model, status, progress });
}

/** `{stages, current, value}` from the child's load callback, or `{stage}` (mmproj). */
function loadProgress(raw: unknown): ModelProgress | undefined {
  if (!isRecord(raw)) return undefined;
  const stage = typeof raw['current'] === 'string' ? raw['current'] : typeof raw['stage'] === 'string' ? raw['stage'] : undefined;
  const value = raw['value'];
  const fraction = typeof value === 'number' && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : undefined;
  if (stage === undefined && fraction === undefined) return undefined;
  return { kind: 'load', ...(stage === undefined ? {} : { stage }), ...(fraction === undefined ? {} : { fraction }) };
}

/** `{progress: {<url>: {done, total}}}`: summed over the files. */
export function downloadProgress(raw: unknown): ModelProgress | undefined {
  const files = isRecord(raw) ? raw['progress'] : undefined;
  if (!isRecord(files)) return undefined;
  let done = 0;
  let total = 0;
  for (const file of Object.values(files)) {
    if (!isRecord(file)) continue;
    if (typeof file['done'] === 'number' && file['done'] >= 0) done += file['done'];
    if (typeof file['total'] === 'number' && file['total'] >= 0) total += file['total'];
  }
  return {
    kind: 'download',
    doneBytes: done,
    totalBytes: total,
    ...(total > 0 ? { fraction: Math.min(1, done / total) } : {}),
  };
}

function ok(event: ModelEvent): ModelEventReading {
  return { ok: true, event };
}
