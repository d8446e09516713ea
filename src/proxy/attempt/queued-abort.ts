// undici's hook for taking a request out of a client's queue while it waits for its connection
// (e.g. still connecting). Its own request API passes it in the dispatch options under an internal
// symbol; a dispatch handler that wants a client who leaves mid-connect to free the request at once,
// as `Pool.request` does, must pass it too. The public dispatch API has no such way: a handler gets
// its controller (onRequestStart) only once the request is written to a socket. So this one internal
// stays, with undici pinned to its minor version (package.json `~`) and a test that fails when the
// symbol disappears or stops working (test/unit/proxy/attempt/queued-abort.test.ts). Should it go anyway,
// the abort still happens, only once the request reaches its socket.

import { createRequire } from 'node:module';

/** Called by undici's client with the function that removes the queued request. */
export type QueuedAbortHook = (cancel: (reason: Error) => void) => void;

function lookUpQueuedAbortSymbol(): symbol | undefined {
  try {
    const symbols: unknown = createRequire(import.meta.url)('undici/lib/core/symbols.js');
    const found = (symbols as { kQueuedAbort?: unknown } | undefined)?.kQueuedAbort;
    return typeof found === 'symbol' ? found : undefined;
  } catch {
    return undefined;
  }
}

/** The option key undici's client reads the hook from, when this undici has one. */
export const QUEUED_ABORT: symbol | undefined = lookUpQueuedAbortSymbol();
