// The example configs per common layout (examples/*.toml beside switchyard.toml) load without
// problems and say what their comments promise; the systemd unit reloads with SIGHUP.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { formatProblems } from '#src/config/load.ts';
import { loadConfig } from '#src/config-tables.ts';
import type { GatewayConfig } from '#src/config/types.ts';

const repoFile = (path: string): Promise<string> => readFile(new URL(`../../../${path}`, import.meta.url), 'utf8');

async function load(path: string, env: Record<string, string> = {}): Promise<GatewayConfig> {
  const result = loadConfig(await repoFile(path), env, path);
  assert.ok(result.ok, result.ok ? '' : formatProblems(result.problems));
  return result.config;
}

test('examples/llama-router.toml: one llama-server router that loads on demand', async () => {
  const config = await load('examples/llama-router.toml');
  assert.deepEqual(
    config.nodes.map((n) => [n.name, n.kind]),
    [['router', 'llamacpp']],
  );
  assert.equal(config.routing.loadOnDemand, true);
  assert.equal(config.models.default, 'qwen3-8b');
});

test('examples/mixed-fleet.toml: vLLM in a group, Ollama for the rest, keys from the environment', async () => {
  const config = await load('examples/mixed-fleet.toml', { SWITCHYARD_KEY: 'client-key', VLLM_KEY: 'node-key' });
  assert.deepEqual(
    config.nodes.map((n) => [n.name, n.kind, n.group ?? '']),
    [
      ['vllm-1', 'vllm', 'big-gpu'],
      ['vllm-2', 'vllm', 'big-gpu'],
      ['ollama', 'ollama', ''],
    ],
  );
  assert.equal(config.models.available.find((m) => m.group === 'big-gpu')?.name, 'Qwen/Qwen2.5-72B-Instruct');
  assert.deepEqual(config.server.apiKeys, ['client-key']);
  const missing = loadConfig(await repoFile('examples/mixed-fleet.toml'), {});
  assert.ok(!missing.ok, 'the keys are required from the environment');
});

test('examples/wol-desktop.toml: a desktop GPU woken by Wake-on-LAN beside an always-on box', async () => {
  const config = await load('examples/wol-desktop.toml');
  const desktop = config.nodes.find((n) => n.name === 'desktop');
  assert.ok(desktop?.wake !== undefined);
  assert.equal(desktop.wakeTimeoutMs, 150_000);
  assert.equal(config.nodes.find((n) => n.name === 'mini')?.wake, undefined);
});

test('examples/switchyard.service: serve with the system config, reload by SIGHUP', async () => {
  const unit = await repoFile('examples/switchyard.service');
  assert.match(unit, /^ExecStart=\S+ (?:--\S+ )*\S+\/bin\/switchyard\.js serve --config \/etc\/switchyard\/switchyard\.toml$/m);
  assert.match(unit, /^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  assert.match(unit, /^\[Install\]\nWantedBy=multi-user\.target$/m);
});
