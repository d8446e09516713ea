// Contract: a fleet starts every node of a spec on loopback and closes them together.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { parseFleetConfig, startFleet, startSimNode } from '#src/sim/index.ts';
import { call } from '#test/unit/sim/dialects/sim-http.ts';

const MODEL_LIST_PATH: Readonly<Record<string, string>> = {
  vllm: '/v1/models',
  llamacpp: '/v1/models',
  'llamacpp-router': '/v1/models',
  ollama: '/api/tags',
  sglang: '/v1/models',
  openai: '/v1/models',
};

test('starts the example fleet, one node of every kind on its own port, and closes it', async () => {
  const parsed = parseFleetConfig(await readFile(new URL('../../../../examples/fleet.toml', import.meta.url), 'utf8'));
  assert.equal(parsed.ok, true);
  if (!parsed.ok) return;
  const fleet = await startFleet(parsed.spec);
  try {
    assert.equal(new Set(fleet.nodes.map((n) => n.port)).size, fleet.nodes.length);
    for (const node of fleet.nodes) {
      assert.match(node.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const answer = await call(node.url, 'GET', MODEL_LIST_PATH[node.kind] ?? '/v1/models', {
        headers: { authorization: 'Bearer sk-sim' },
      });
      assert.equal(answer.status, 200, node.name);
      for (const id of node.modelIds()) assert.ok(answer.text.includes(`"${id}"`), `${node.name} lists ${id}`);
    }
  } finally {
    await fleet.close();
  }
  for (const node of fleet.nodes) await assert.rejects(call(node.url, 'GET', '/v1/models', { timeoutMs: 500 }));
});

test("fails to start when a node's port is taken", async () => {
  const blocker = await startSimNode({ kind: 'vllm', models: ['m'] });
  try {
    const attempt = startFleet({
      nodes: [
        { kind: 'sglang', models: ['s'], name: 'first' },
        { kind: 'vllm', models: ['m'], port: blocker.port },
      ],
    });
    await assert.rejects(attempt, /EADDRINUSE/);
  } finally {
    await blocker.close();
  }
});

test('refuses a node spec that breaks the rules', async () => {
  await assert.rejects(startSimNode({ kind: 'llamacpp', models: ['a', 'b'] }), /serves exactly one model/);
  await assert.rejects(startSimNode({ kind: 'vllm', models: [] }), /at least one model/);
});
