// Issue 28, lean process: an idle `serve` with one node, no [mesh] and `workers = 1` held two things
// it never used. (1) Node's own bundled copy of undici (~750 KB of source, ~13 MB of RSS in a bare
// process): an ESM `import { createServer } from 'node:http'` builds node:http's module namespace by
// reading every export, and its lazy WebSocket / MessageEvent / CloseEvent getters load it. The
// gateway now takes node:http's functions through process.getBuiltinModule (src/core/node-http.ts).
// (2) The request-worker pool (the workers' link, desks and mesh, ~14 modules): it now loads only with
// `workers > 1`. Checked by what a spawned gateway loads (an import trace), not by its RSS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadedByServe } from '#test/fixtures/loaded-modules.ts';

test(
  'serve with workers = 1 and no [mesh] loads neither Node’s bundled undici nor the worker pool',
  { timeout: 150_000 },
  async () => {
    const { urls: lines, code } = await loadedByServe();
    assert.equal(code, 0);
    assert.ok(
      lines.includes('builtin:http'),
      `the trace lists Node's internal modules: ${lines.filter((l) => l.startsWith('builtin:')).length}`,
    );
    assert.ok(
      lines.some((l) => l.endsWith('/src/gateway/parts.ts')),
      'the gateway loaded',
    );
    const unused = lines.filter(
      (l) =>
        l === 'builtin:internal/deps/undici/undici' || /\/src\/workers\/(request-workers|worker-link|worker-main)\.ts$/.test(l),
    );
    assert.deepEqual(unused, [], 'what a one-thread gateway without [mesh] does not use is not loaded');
  },
);
