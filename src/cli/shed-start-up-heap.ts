// Once `serve` has started (the sources compiled, the config parsed, every node's first probe and
// listing answered), one memory-reducing garbage collection gives back the heap that start-up grew.
// Start-up's allocations mostly survive (modules, the config), so V8 grows the young generation to
// its ceiling (`--max-semi-space-size`, 16 MB semispaces with the recommended flags) and keeps it:
// an idle gateway never triggers V8's memory reducer, and a regular full collection does not
// shrink it. A last-resort collection (V8's "collect all available garbage") shrinks the young
// generation back to its floor and releases the pooled pages: ~15 MB of an idle one-node gateway's
// RSS (issue 28, lean process; docs/performance.md, "Lean process"). Under load V8 grows it again.
//
// The collector is reached the way Node documents for `--expose-gc`, without that flag on the
// command line: the flag is set for as long as it takes a fresh context to hand over its `gc`
// (V8 installs it in contexts made while the flag is set), then cleared again, so no script of the
// gateway sees a global `gc` and the compile cache's flag check is unchanged.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

function collector(): NodeJS.GCFunction | undefined {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  try {
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as NodeJS.GCFunction) : undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** One synchronous memory-reducing collection; false when the collector cannot be reached. */
export function shedStartUpHeap(): boolean {
  const gc = collector();
  if (gc === undefined) return false;
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return true;
}
