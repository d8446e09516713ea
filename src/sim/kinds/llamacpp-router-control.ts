// The router sim's test knobs (POST /__sim/model {action, model, …}): what a test does to a router
// that no API request does — a child killed (`crash`: SIGKILL, exit code 1), a child's idle sleep
// (`sleep`), and the event stream's misbehaviour (`flood` frames at once, one `oversize` frame,
// `drop` every stream).

import type { ResidentModels } from '#src/sim/resident-models.ts';
import type { RouterEventHub } from '#src/sim/kinds/llamacpp-router-events.ts';

export type ControlAnswer = { readonly ok: true; readonly detail?: string } | { readonly ok: false; readonly error: string };

export function routerControl(
  action: string,
  body: Readonly<Record<string, unknown>>,
  residents: ResidentModels,
  hub: RouterEventHub,
): ControlAnswer {
  const name = typeof body['model'] === 'string' ? body['model'] : '';
  const id = residents.resolve(name)?.id;
  switch (action) {
    case 'crash':
      if (id === undefined) return { ok: false, error: `no model '${name}'` };
      return residents.crash(id) ? { ok: true } : { ok: false, error: `model '${id}' is not running` };
    case 'sleep':
      if (id === undefined) return { ok: false, error: `no model '${name}'` };
      return residents.sleep(id) ? { ok: true } : { ok: false, error: `model '${id}' is not loaded` };
    case 'flood': {
      const count = typeof body['count'] === 'number' && body['count'] > 0 ? Math.min(100_000, Math.floor(body['count'])) : 1000;
      for (let i = 0; i < count; i++) hub.broadcast({ model: name, event: 'status_change', data: { status: 'loading' } });
      return { ok: true, detail: `${count} frames to ${hub.openStreams} stream(s)` };
    }
    case 'oversize': {
      const bytes =
        typeof body['bytes'] === 'number' && body['bytes'] > 0
          ? Math.min(16 * 1024 * 1024, Math.floor(body['bytes']))
          : 1024 * 1024;
      hub.broadcast({ model: name, event: 'status_change', data: { status: 'loaded', info: { padding: 'x'.repeat(bytes) } } });
      return { ok: true, detail: `one frame of ${bytes}+ bytes to ${hub.openStreams} stream(s)` };
    }
    case 'drop': {
      const streams = hub.openStreams;
      hub.dropAll();
      return { ok: true, detail: `${streams} stream(s) ended` };
    }
    default:
      return { ok: false, error: `unknown action '${action}' (crash, sleep, flood, oversize, drop)` };
  }
}
