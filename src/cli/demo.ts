// `switchyard demo`: a simulated fleet (one node of each kind, two vLLM replicas, two llama-servers
// with an agent-sized context for coding agents) and a gateway in front of it, all on loopback,
// until Ctrl-C. The config goes through the same loader as `serve`. Every sim answers naturally
// (short answers that end by themselves, tool calls when tools are given), so agents can run on it.

import { once } from 'node:events';
import { formatProblems } from '#src/config/index.ts';
import { loadConfig } from '#src/config-tables.ts';
import { createLogger } from '#src/logs/logger.ts';
import { Gateway } from '#src/main.ts';
import { parseFleetConfig, startFleet, type SimNode } from '#src/sim/index.ts';
import { flagValue, type Command } from './io.ts';

/** The model the demo's coding-agent lines use: 131,072 tokens of context, on llama-servers that speak every agent's API. */
export const DEMO_AGENT_MODEL = 'qwen3-coder-30b';

export const DEMO_FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]
answers = "natural"

[[node]]
name = "vllm-b"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]
answers = "natural"

[[node]]
name = "agent-a"
kind = "llamacpp"
models = ["${DEMO_AGENT_MODEL}"]
context = 131072
kv = "per-slot"
ttft = "150ms"
prefix_cache_ttft = "15ms"
answers = "natural"

[[node]]
name = "agent-b"
kind = "llamacpp"
models = ["${DEMO_AGENT_MODEL}"]
context = 131072
kv = "per-slot"
ttft = "150ms"
prefix_cache_ttft = "15ms"
answers = "natural"

[[node]]
name = "llamacpp-router"
kind = "llamacpp-router"
answers = "natural"
[[node.model]]
id = "qwen3-8b"
status = "loaded"
[[node.model]]
id = "gemma-3-4b"
status = "unloaded"

[[node]]
name = "ollama"
kind = "ollama"
models = ["llama3.2:latest", "nomic-embed-text:latest"]
answers = "natural"

[[node]]
name = "sglang"
kind = "sglang"
models = ["qwen2.5-7b-instruct"]
answers = "natural"

[[node]]
name = "openai"
kind = "openai"
models = ["gpt-oss-20b"]
answers = "natural"
`;

const KIND_OF_SIM: Readonly<Record<string, string>> = {
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  'llamacpp-router': 'llamacpp',
  ollama: 'ollama',
  sglang: 'sglang',
  openai: 'openai',
};

/** The gateway config for a running fleet: one [[nodes]] entry per simulated node. */
export function demoGatewayToml(nodes: readonly SimNode[], port: number): string {
  const lines = [
    '[server]',
    `listen = "127.0.0.1:${port}"`,
    '[health]',
    'interval = "2s"',
    'timeout = "1s"',
    '[discovery]',
    'interval = "3s"',
    '[models]',
    'default = "llama-3.1-8b-instruct"',
  ];
  for (const node of nodes) {
    lines.push('[[nodes]]', `name = "${node.name}"`, `url = "${node.url}"`, `kind = "${KIND_OF_SIM[node.kind] ?? 'auto'}"`);
  }
  return `${lines.join('\n')}\n`;
}

export const runDemo: Command = async (argv, io) => {
  const portText = flagValue(argv, 'port') ?? '0';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr.write(`--port must be a port number (0-65535), got '${portText}'\n`);
    return 2;
  }
  const fleetSpec = parseFleetConfig(DEMO_FLEET);
  if (!fleetSpec.ok) {
    io.stderr.write(`demo fleet is invalid: ${fleetSpec.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}\n`);
    return 1;
  }
  const fleet = await startFleet(fleetSpec.spec);
  const loaded = loadConfig(demoGatewayToml(fleet.nodes, port), io.env);
  if (!loaded.ok) {
    await fleet.close();
    io.stderr.write(`${formatProblems(loaded.problems)}\n`);
    return 1;
  }
  const logger = createLogger({ format: 'pretty', fd: 2, level: io.env.SWITCHYARD_LOG_LEVEL ?? 'info' });
  let gateway: Gateway;
  try {
    gateway = await Gateway.start({ config: loaded.config, logger });
  } catch (error) {
    await fleet.close();
    io.stderr.write(`could not start the gateway: ${(error as Error).message}\n`);
    return 1;
  }
  await gateway.firstRoundDone(5_000);
  io.stdout.write(demoBanner(gateway.url, fleet.nodes));
  if (!io.signal.aborted) await once(io.signal, 'abort');
  logger.debug('demo: stopping the gateway');
  await gateway.close();
  logger.debug('demo: stopping the fleet');
  await fleet.close();
  logger.debug('demo: stopped');
  return 0;
};

/** Copy-paste lines that point Claude Code, Codex and OpenCode at the demo (docs/agents.md explains each setting). */
export function agentLines(url: string): string[] {
  const model = DEMO_AGENT_MODEL;
  const codexProvider = `model_providers.switchyard={name="Switchyard demo",base_url="${url}/v1",wire_api="responses"}`;
  const opencode = JSON.stringify({
    $schema: 'https://opencode.ai/config.json',
    provider: {
      switchyard: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Switchyard demo',
        options: { baseURL: `${url}/v1` },
        models: { [model]: { name: model, tool_call: true } },
      },
    },
    model: `switchyard/${model}`,
  });
  return [
    'Coding agents (docs/agents.md):',
    `  ANTHROPIC_BASE_URL=${url} ANTHROPIC_AUTH_TOKEN=demo ANTHROPIC_MODEL=${model} ANTHROPIC_DEFAULT_HAIKU_MODEL=${model} CLAUDE_CODE_MAX_CONTEXT_TOKENS=131072 DISABLE_TELEMETRY=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 claude`,
    `  codex -c model_provider=switchyard -c model=${model} -c '${codexProvider}'`,
    `  OPENCODE_CONFIG_CONTENT='${opencode}' opencode`,
  ];
}

function demoBanner(url: string, nodes: readonly SimNode[]): string {
  const fleet = nodes.map((n) => `  ${n.name.padEnd(16)} ${n.kind.padEnd(16)} ${n.url}  ${n.modelIds().join(', ')}`);
  return [
    `Switchyard demo gateway: ${url}`,
    '',
    'Simulated fleet:',
    ...fleet,
    '',
    'Try:',
    `  curl -s ${url}/v1/models`,
    `  curl -s ${url}/v1/chat/completions -H 'content-type: application/json' -d '{"model":"qwen3-8b","messages":[{"role":"user","content":"Hello!"}]}'`,
    `  curl -sN ${url}/v1/chat/completions -H 'content-type: application/json' -d '{"model":"llama-3.1-8b-instruct","stream":true,"messages":[{"role":"user","content":"Stream, please."}]}'`,
    '',
    ...agentLines(url),
    '',
    `Dashboard: ${url}/admin/   Health: ${url}/health   Metrics: ${url}/metrics   Ctrl-C to stop.`,
    '',
  ].join('\n');
}
