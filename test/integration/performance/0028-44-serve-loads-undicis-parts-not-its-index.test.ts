// Issue 28, lean process: every value import of 'undici' loaded undici's whole index (~110 modules:
// fetch, WebSocket, the cache stores with sqlite, the mock agents) where the gateway runs Pool, Agent
// and the error classes (~22). Those now come from their own modules through src/core/undici-parts.ts
// (an idle `serve`, one node, no [mesh]: ~4 MB of RSS). The architecture test keeps src/ from
// importing the index; this checks nothing else a serving gateway loads brings it back (an import
// trace, not its RSS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadedByServe } from '#test/fixtures/loaded-modules.ts';

test('serve loads undici’s Pool, Agent and errors, not undici’s index', { timeout: 150_000 }, async () => {
  const { urls, code } = await loadedByServe();
  assert.equal(code, 0);
  const undici = urls.filter((l) => l.includes('/node_modules/undici/'));
  assert.ok(
    undici.some((l) => l.endsWith('/undici/lib/dispatcher/pool.js')),
    'the gateway loaded undici’s Pool',
  );
  assert.deepEqual(
    undici.filter((l) => l.endsWith('/undici/index.js')),
    [],
    'undici’s index is not loaded',
  );
});
