// samePoolSettings: only the settings a connection pool is built from rebuild the pools on reload.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import type { UpstreamConfig } from '#src/config/types.ts';
import { samePoolSettings } from '#src/proxy/attempt/pool-settings.ts';

test('a pool is rebuilt for a change of its connection settings, and for nothing else', () => {
  const base = CONFIG_DEFAULTS.upstream;
  const rows: readonly (readonly [string, Partial<UpstreamConfig>, boolean])[] = [
    ['nothing', {}, true],
    ['the connect timeout', { connectTimeoutMs: base.connectTimeoutMs + 1 }, false],
    ['the headers timeout', { headersTimeoutMs: base.headersTimeoutMs + 1 }, false],
    ['the body idle timeout', { bodyIdleTimeoutMs: base.bodyIdleTimeoutMs + 1 }, false],
    ['the connections per node', { maxConnections: base.maxConnections + 1 }, false],
    ['the connection wait', { connectionWaitMs: base.connectionWaitMs + 1 }, false],
    ['the largest held answer', { maxHeldBodyBytes: base.maxHeldBodyBytes + 1 }, true],
    ['the held-bytes total', { maxHeldBytesTotal: base.maxHeldBytesTotal + 1 }, true],
    ['the total timeout', { totalTimeoutMs: base.totalTimeoutMs + 1 }, true],
    ['the ejection threshold', { ejectAfterFailures: base.ejectAfterFailures + 1 }, true],
    ['the ejection time', { ejectForMs: base.ejectForMs + 1 }, true],
  ];
  for (const [what, overrides, expected] of rows)
    assert.equal(samePoolSettings(base, { ...base, ...overrides }), expected, `a change of ${what}`);
});
