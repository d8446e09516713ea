// `switchyard check-config FILE`: load and validate a config exactly as `serve` would, then print
// every problem (exit 1) or a summary of what the gateway would run with (exit 0). API keys are
// never printed; the summary only says whether a node has one.
import {
  formatDurationMs,
  formatListenAddress,
  formatProblems,
  formatSizeBytes,
  loadConfigFile,
  meshOpenToClients,
  MESH_OPEN_TO_CLIENTS,
  type GatewayConfig,
  type ModelSpec,
} from '#src/config/index.ts';
import type { Command } from './io.ts';
import { CHECK_CONFIG_USAGE } from './command-usage.ts';

export const runCheckConfig: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(CHECK_CONFIG_USAGE);
    return 0;
  }
  const file = configFileArgument(argv);
  if (file === undefined) {
    io.stderr.write(CHECK_CONFIG_USAGE);
    return 2;
  }
  const result = await loadConfigFile(file, io.env);
  if (!result.ok) {
    const count = result.problems.length;
    io.stderr.write(`${formatProblems(result.problems)}\n${count} ${count === 1 ? 'problem' : 'problems'} in ${file}\n`);
    return 1;
  }
  io.stdout.write(`${file} is valid\n${describeConfig(result.config).join('\n')}\n`);
  return 0;
};

/** Exactly one file, positional or as `--config FILE`; anything else is a usage error. */
function configFileArgument(argv: readonly string[]): string | undefined {
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') {
      const value = argv[++i];
      if (value === undefined) return undefined;
      files.push(value);
    } else if (arg.startsWith('--config=')) files.push(arg.slice('--config='.length));
    else if (arg.startsWith('-')) return undefined;
    else files.push(arg);
  }
  return files.length === 1 && files[0] !== '' ? files[0] : undefined;
}

function describeConfig(config: GatewayConfig): string[] {
  const { server, health, discovery, upstream, models, nodes } = config;
  const nodeLines = nodes.map((node) => {
    const extras = [node.group === undefined ? '' : `group ${node.group}`, node.apiKey === undefined ? '' : 'api key set'];
    const suffix = extras.filter((extra) => extra !== '').join(', ');
    return `  ${node.name}  ${node.kind}  ${node.url}${suffix === '' ? '' : `  (${suffix})`}`;
  });
  const modelLines = models.available.map((model) => `  ${describeModel(model)}`);
  return [
    `listen: ${formatListenAddress(server.listen)} (max request body ${formatSizeBytes(server.maxRequestBodyBytes)})`,
    `nodes (${nodes.length}):`,
    ...nodeLines,
    `models: default ${models.default ?? '(none)'}; ${
      models.available.length === 0 ? 'none declared (discovered from nodes)' : `${models.available.length} declared:`
    }`,
    ...modelLines,
    `health: every ${formatDurationMs(health.intervalMs)}, timeout ${formatDurationMs(health.timeoutMs)}, ` +
      `dead after ${health.failThreshold} failed probe${health.failThreshold === 1 ? '' : 's'}`,
    `discovery: every ${formatDurationMs(discovery.intervalMs)}, timeout ${formatDurationMs(discovery.timeoutMs)}, ` +
      `max body ${formatSizeBytes(discovery.maxBodyBytes)}, miss wait ${formatDurationMs(discovery.missWaitMs)}, ` +
      `miss cooldown ${formatDurationMs(discovery.missCooldownMs)}`,
    `upstream: connect timeout ${formatDurationMs(upstream.connectTimeoutMs)}, ` +
      `headers timeout ${formatDurationMs(upstream.headersTimeoutMs)}, body idle timeout ${formatDurationMs(upstream.bodyIdleTimeoutMs)}`,
    describeMesh(config.mesh),
    ...(meshOpenToClients(config) ? [`warning: ${MESH_OPEN_TO_CLIENTS}`] : []),
  ];
}

function describeMesh(mesh: GatewayConfig['mesh']): string {
  if (mesh === undefined) return 'mesh: none (this gateway runs alone)';
  const pins = mesh.sites.map((pin) => pin.id).join(', ');
  return (
    `mesh: site ${mesh.site} at ${mesh.url}, ${mesh.peers.length} bootstrap peer${mesh.peers.length === 1 ? '' : 's'}, ` +
    `${mesh.sites.length} pinned site${mesh.sites.length === 1 ? '' : 's'}${pins === '' ? '' : ` (${pins})`}, ` +
    `heartbeat ${formatDurationMs(mesh.heartbeatMs)}, fresh for ${formatDurationMs(mesh.freshnessMs)}`
  );
}

function describeModel(model: ModelSpec): string {
  const extras = [
    model.group === undefined ? '' : `group ${model.group}`,
    model.aliases.length === 0 ? '' : `aliases ${model.aliases.join(', ')}`,
  ];
  const suffix = extras.filter((extra) => extra !== '').join('; ');
  return suffix === '' ? model.name : `${model.name}  (${suffix})`;
}
