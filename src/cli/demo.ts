// `switchyard demo`: a simulated fleet (one node of each kind, two vLLM replicas) and a gateway in
// front of it, all on loopback, until Ctrl-C. The config goes through the same loader as `serve`.

import { once } from 'node:events';
import { loadConfig, formatProblems } from '#src/config/index.ts';
import { createLogger } from '#src/logs/logger.ts';
import { Gateway } from '#src/main.ts';
import { parseFleetConfig, startFleet, type SimNode } from '#src/sim/index.ts';
import { flagValue, type Command } from './io.ts';

export const DEMO_FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]

[[node]]
name = "vllm-b"
kind = "vllm"
models = ["llama-3.1-8b-instruct"]

[[node]]
name = "llamacpp-router"
kind = "llamacpp-router"
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

[[node]]
name = "sglang"
kind = "sglang"
models = ["qwen2.5-7b-instruct"]
`;

const KIND_OF_SIM: Readonly<Record<string, string>> = {
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  'llamacpp-router': 'llamacpp',
  ollama: 'ollama',
  sglang: 'sglang',
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
    `Dashboard: ${url}/admin/   Health: ${url}/health   Metrics: ${url}/metrics   Ctrl-C to stop.`,
    '',
  ].join('\n');
}
