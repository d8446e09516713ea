import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { MESH_DEFAULTS } from '#src/mesh/config/mesh-config.ts';

// docs/config.md and examples/switchyard.toml state these values; change them together.
test('defaults are the documented values', () => {
  assert.deepEqual(CONFIG_DEFAULTS, {
    server: {
      listen: { host: '127.0.0.1', port: 8080 },
      maxRequestBodyBytes: 10 * 1024 * 1024,
      maxHeaderBytes: 16 * 1024,
      headerTimeoutMs: 10_000,
      listenBacklog: 4096,
      requestTimeoutMs: 60_000,
      drainTimeoutMs: 30_000,
      apiKeys: [],
      corsOrigins: [],
      workers: 1,
      stateDir: undefined,
    },
    admin: { listen: undefined, token: undefined, hosts: [] },
    health: { intervalMs: 5_000, timeoutMs: 2_000, failThreshold: 3 },
    discovery: {
      intervalMs: 10_000,
      timeoutMs: 5_000,
      maxBodyBytes: 4 * 1024 * 1024,
      missWaitMs: 0,
      missCooldownMs: 2_000,
      maxModelsPerNode: 1024,
      maxModelIdBytes: 256,
      capacityRequestsPerPoll: 64,
    },
    upstream: {
      connectTimeoutMs: 5_000,
      headersTimeoutMs: 300_000,
      bodyIdleTimeoutMs: 300_000,
      firstTokenTimeoutMs: 120_000,
      totalTimeoutMs: 3_600_000,
      maxHeldBodyBytes: 4 * 1024 * 1024,
      maxHeldBytesTotal: 64 * 1024 * 1024,
      ejectAfterFailures: 5,
      ejectForMs: 10_000,
      maxConnections: 256,
      connectionWaitMs: 5_000,
    },
    load: { intervalMs: 5_000, timeoutMs: 2_000, maxBodyBytes: 1024 * 1024, staleAfterMs: 15_000 },
    routing: {
      policy: 'least-in-flight',
      affinityHeader: 'x-session-id',
      affinityPrefixChars: 256,
      affinityEpsilon: 0.25,
      sessions: true,
      sessionTtlMs: 1_800_000,
      cacheThreshold: 0.5,
      cacheBalanceAbs: 8,
      cacheBalanceRel: 1.5,
      cachePromptChars: 8_192,
      cacheMaxTreeChars: 4_000_000,
      queueTimeoutMs: 30_000,
      maxQueue: 100,
      queueAgingMs: 10_000,
      loadOnDemand: true,
      translate: true,
      resumableStreams: true,
      completionReserveTokens: 512,
      tokenizeTimeoutMs: 500,
      swapAfterMs: 5_000,
      loadTimeoutMs: 120_000,
      routerQueue: 'auto',
    },
    models: { operatorHoldMs: 600_000 },
    node: { kind: 'auto', kv: 'auto', weight: 1, wakeTimeoutMs: 120_000 },
  });
  // [mesh]'s defaults are the mesh table's own (mesh/mesh-config.ts).
  assert.deepEqual(MESH_DEFAULTS, {
    peers: [],
    maxPeerMessagesPerSecond: 200,
    heartbeatMs: 5_000,
    freshnessHeartbeats: 3,
    maxModelsPerSite: 256,
    maxClockSkewMs: 30_000,
    maxRememberedForwards: 65_536,
    maxMessageBytes: 256 * 1024,
  });
});

test('defaults cannot be changed at run time', () => {
  assert.ok(Object.isFrozen(CONFIG_DEFAULTS));
  assert.ok(Object.isFrozen(CONFIG_DEFAULTS.server.listen));
  assert.ok(Object.isFrozen(CONFIG_DEFAULTS.upstream));
  assert.ok(Object.isFrozen(MESH_DEFAULTS));
});
