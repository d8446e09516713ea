import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '#src/config-tables.ts';
import { requestSettings } from '#src/proxy/index.ts';

test('one frozen settings snapshot carries every figure a request reads', () => {
  const loaded = loadConfig('[[nodes]]\nname = "a"\nurl = "http://127.0.0.1:1"\n', {});
  assert.ok(loaded.ok);
  const settings = requestSettings(loaded.config);
  assert.ok(Object.isFrozen(settings));
  const { routing, upstream, discovery, server } = loaded.config;
  assert.deepEqual(
    [settings.queueTimeoutMs, settings.maxQueue, settings.missWaitMs, settings.loadOnDemand, settings.completionReserveTokens],
    [routing.queueTimeoutMs, routing.maxQueue, discovery.missWaitMs, routing.loadOnDemand, routing.completionReserveTokens],
  );
  assert.deepEqual(
    [settings.totalTimeoutMs, settings.maxHeldBodyBytes, settings.maxRequestBodyBytes],
    [upstream.totalTimeoutMs, upstream.maxHeldBodyBytes, server.maxRequestBodyBytes],
  );
  assert.equal(settings.retryAfterSeconds, Math.max(1, Math.ceil(loaded.config.health.intervalMs / 1000)));
});
