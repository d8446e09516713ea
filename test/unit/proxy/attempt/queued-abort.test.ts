// undici's public dispatch API gives a request no way out of a client's queue while its connection
// is still being made (onRequestStart, and with it the controller, comes only once the request is
// written to a socket). Only undici's internal `kQueuedAbort` hook does that, so the gateway uses it
// (queued-abort.ts, the call in forward.ts) with undici pinned to its minor version. These fail when the
// internal disappears or changes shape, or when the pin is loosened, instead of a client who leaves
// mid-connect quietly holding a connection slot until the connect times out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';
import { Pool } from '#src/core/undici-parts.ts';
import { QUEUED_ABORT, type QueuedAbortHook } from '#src/proxy/attempt/queued-abort.ts';

test('undici still exports the queued-abort hook symbol', () => {
  assert.equal(typeof QUEUED_ABORT, 'symbol', 'undici/lib/core/symbols.js has no kQueuedAbort');
});

test('a Pool hands the hook a cancel that takes a request still connecting out of its queue', async () => {
  assert.ok(QUEUED_ABORT !== undefined);
  // A connection that never completes: the request stays queued on its client.
  const pool = new Pool('http://127.0.0.1:9', {
    connect: (_opts, callback) => void setTimeout(() => callback(new Error('late'), null), 60_000).unref(),
  });
  try {
    const failed = Promise.withResolvers<Error>();
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: () => failed.reject(new Error('the request reached a socket')),
      onResponseStart: () => {},
      onResponseData: () => {},
      onResponseEnd: () => {},
      onResponseError: (_controller, error) => failed.resolve(error),
    };
    const cancels: ((reason: Error) => void)[] = [];
    const hook: QueuedAbortHook = (cancel) => void cancels.push(cancel);
    const options = { path: '/', method: 'GET', [QUEUED_ABORT]: hook } as Dispatcher.DispatchOptions;
    pool.dispatch(options, handler);
    assert.equal(cancels.length, 1, 'the pool called the hook while the request waits for its connection');
    assert.equal(pool.stats.pending, 1);
    cancels[0]?.(new Error('client left'));
    assert.match((await failed.promise).message, /client left/);
    assert.equal(pool.stats.pending, 0, 'the request left the queue at once');
  } finally {
    await pool.destroy();
  }
});

test('undici is pinned to the minor version whose internal this relies on', () => {
  const manifest = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const range = manifest.dependencies['undici'] ?? '';
  assert.match(range, /^~\d+\.\d+\.\d+$/, 'undici must stay pinned to a minor version (~x.y.z)');
  const installed = (createRequire(import.meta.url)('undici/package.json') as { version: string }).version;
  const minor = (version: string): string => version.replace(/^~/, '').split('.').slice(0, 2).join('.');
  assert.equal(minor(installed), minor(range), 'the installed undici is the pinned minor');
});
