import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONFIG_DEFAULTS } from '#src/config/defaults.ts';
import { diffConfig } from '#src/config/diff.ts';
import type { GatewayConfig, NodeSpec } from '#src/config/types.ts';
import { meshChangedLive } from '#src/mesh/config/mesh-table.ts';
import { spec } from '#test/fixtures/builders.ts';

function node(name: string, overrides: Partial<NodeSpec> = {}): NodeSpec {
  return spec(name, { url: `http://${name}:8000`, ...overrides });
}

function config(nodes: readonly NodeSpec[], overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    server: CONFIG_DEFAULTS.server,
    admin: CONFIG_DEFAULTS.admin,
    health: CONFIG_DEFAULTS.health,
    discovery: CONFIG_DEFAULTS.discovery,
    upstream: CONFIG_DEFAULTS.upstream,
    load: CONFIG_DEFAULTS.load,
    routing: CONFIG_DEFAULTS.routing,
    models: { default: undefined, available: [], operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs },
    nodes,
    ...overrides,
    tenants: overrides.tenants ?? [],
  };
}

const NOTHING_CHANGED = {
  modelsChanged: false,
  healthChanged: false,
  discoveryChanged: false,
  upstreamChanged: false,
  serverChanged: false,
};

describe('diffConfig', () => {
  test('reports nothing changed for equal configs built separately', () => {
    const change = diffConfig(config([node('a')]), config([node('a')]));
    assert.deepEqual(change, {
      nodes: [node('a')],
      nodesAdded: [],
      nodesRemoved: [],
      nodesKept: [{ old: node('a'), next: node('a') }],
      nodesRelisted: [],
      nodesReplaced: [],
      ...NOTHING_CHANGED,
    });
  });

  test('lists nodes only in the new config as added, in new-config order', () => {
    const change = diffConfig(config([node('a')]), config([node('c'), node('a'), node('b')]));
    assert.deepEqual(
      change.nodesAdded.map((added) => added.name),
      ['c', 'b'],
    );
  });

  test('lists nodes only in the old config as removed, in old-config order', () => {
    const change = diffConfig(config([node('b'), node('a'), node('c')]), config([node('a')]));
    assert.deepEqual(
      change.nodesRemoved.map((removed) => removed.name),
      ['b', 'c'],
    );
  });

  test('keeps a node with the same name and url whose group changed, without re-listing it', () => {
    const old = node('a');
    const next = node('a', { group: 'big' });
    const change = diffConfig(config([old]), config([next]));
    assert.deepEqual(change.nodesKept, [{ old, next }]);
    assert.deepEqual(change.nodesRelisted, []);
    assert.deepEqual(change.nodesReplaced, []);
  });

  test('keeps a node with the same name and url whose key, kind or group changed, but lists it afresh', () => {
    const old = node('a');
    const next = node('a', { apiKey: 'sk-new', kind: 'vllm', group: 'big' });
    const change = diffConfig(config([old]), config([next]));
    assert.deepEqual(change.nodesRelisted, [{ old, next }]);
    assert.deepEqual(change.nodesKept, []);
    assert.deepEqual(change.nodesReplaced, []);
  });

  test('lists the new node set in new-config order, whatever became of each node', () => {
    const change = diffConfig(
      config([node('a'), node('b')]),
      config([node('c'), node('b', { url: 'http://moved:1' }), node('a')]),
    );
    assert.deepEqual(
      change.nodes.map((n) => n.name),
      ['c', 'b', 'a'],
    );
  });

  test('replaces a node whose url changed under the same name, so its state starts fresh', () => {
    const old = node('a');
    const next = node('a', { url: 'http://elsewhere:8000' });
    const change = diffConfig(config([old]), config([next]));
    assert.deepEqual(change.nodesReplaced, [{ old, next }]);
    assert.deepEqual(change.nodesKept, []);
    assert.deepEqual(change.nodesAdded, []);
    assert.deepEqual(change.nodesRemoved, []);
  });

  test('treats a renamed node as one removed and one added', () => {
    const change = diffConfig(config([node('a')]), config([node('b', { url: node('a').url })]));
    assert.deepEqual(
      change.nodesRemoved.map((removed) => removed.name),
      ['a'],
    );
    assert.deepEqual(
      change.nodesAdded.map((added) => added.name),
      ['b'],
    );
  });

  const sectionCases: readonly (readonly [string, Partial<GatewayConfig>, keyof typeof NOTHING_CHANGED])[] = [
    [
      'models',
      { models: { default: 'm', available: [], operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs } },
      'modelsChanged',
    ],
    ['health', { health: { ...CONFIG_DEFAULTS.health, failThreshold: 9 } }, 'healthChanged'],
    ['discovery', { discovery: { ...CONFIG_DEFAULTS.discovery, missWaitMs: 1 } }, 'discoveryChanged'],
    ['upstream', { upstream: { ...CONFIG_DEFAULTS.upstream, connectTimeoutMs: 1 } }, 'upstreamChanged'],
    ['server', { server: { ...CONFIG_DEFAULTS.server, listen: { host: '0.0.0.0', port: 8080 } } }, 'serverChanged'],
  ];
  for (const [section, overrides, flag] of sectionCases) {
    test(`flags a change in ${section} settings as ${flag} and nothing else`, () => {
      const [before, after] = [config([node('a')]), config([node('a')], overrides)];
      const change = diffConfig(before, after);
      assert.deepEqual(
        {
          modelsChanged: change.modelsChanged,
          healthChanged: change.healthChanged,
          discoveryChanged: change.discoveryChanged,
          upstreamChanged: change.upstreamChanged,
          serverChanged: change.serverChanged,
          meshChanged: meshChangedLive(before, after),
        },
        { ...NOTHING_CHANGED, meshChanged: false, [flag]: true },
      );
    });
  }

  test('flags an alias change inside a declared model as a models change', () => {
    const before = config([node('a')], {
      models: {
        default: undefined,
        available: [{ name: 'm', group: undefined, aliases: ['x'], policy: undefined }],
        operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs,
      },
    });
    const after = config([node('a')], {
      models: {
        default: undefined,
        available: [{ name: 'm', group: undefined, aliases: ['y'], policy: undefined }],
        operatorHoldMs: CONFIG_DEFAULTS.models.operatorHoldMs,
      },
    });
    assert.equal(diffConfig(before, after).modelsChanged, true);
  });
});
