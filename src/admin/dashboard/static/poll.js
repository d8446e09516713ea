// One polled read of an admin endpoint while a view is mounted: `read(signal)` is asked at once,
// then `periodMs` after each answer, until the view unmounts (its request is aborted then). What
// `read` returns becomes the state; undefined keeps the state as it was. `read` reports its own
// failures (a failure it throws keeps the state). Used by the Tenants view, the cluster line and
// the Models view's management columns.

import { useEffect, useState } from 'preact/hooks';
import { tokenHeaders } from './feed.js';

const ANSWER_TIMEOUT_MS = 5_000;

/** GET `path` (relative to /admin/) with the token, bounded by its own timeout and by `signal`. */
export function fetchAdmin(path, token, signal) {
  return fetch(path, {
    headers: tokenHeaders(token),
    cache: 'no-store',
    signal: AbortSignal.any([signal, AbortSignal.timeout(ANSWER_TIMEOUT_MS)]),
  });
}

/** Seconds a fetchAdmin waits for an answer (for messages). */
export const ANSWER_TIMEOUT_S = ANSWER_TIMEOUT_MS / 1000;

export function usePolled(token, initial, periodMs, read) {
  const [state, setState] = useState(initial);
  useEffect(() => {
    const stop = new AbortController();
    let timer;
    const poll = async () => {
      const next = await read(stop.signal).catch(() => undefined);
      if (stop.signal.aborted) return;
      if (next !== undefined) setState(next);
      timer = setTimeout(poll, periodMs);
    };
    poll();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, [token]);
  return state;
}
