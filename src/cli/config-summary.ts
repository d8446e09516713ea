// What `switchyard check-config` prints for a valid config: one line (or a block) per section —
// server, admin, nodes, models (with pins, preloads and warm counts), health, discovery, load,
// upstream, routing, then each feature table's own lines (its `summary`, src/config-tables.ts)
// and their warnings — each as the gateway would run it, so what a section sets (or leaves at its
// defaults) can be read at a glance. Secrets (API keys, the admin token, tenant keys, the store
// password) are never printed: only whether they are set, and how many.
import { formatDurationMs, formatListenAddress, formatSizeBytes, type GatewayConfig, type ModelSpec } from '#src/config/index.ts';
import { plural } from '#src/config/plural.ts';
import { configWarnings, featureSummary } from '#src/config-tables.ts';

export function describeConfig(config: GatewayConfig): string[] {
  return [
    describeServer(config.server),
    describeAdmin(config.admin),
    ...describeNodes(config.nodes),
    ...describeNodeSources(config.nodeSources ?? []),
    ...describeModels(config.models),
    `health: every ${formatDurationMs(config.health.intervalMs)}, timeout ${formatDurationMs(config.health.timeoutMs)}, ` +
      `dead after ${plural(config.health.failThreshold, 'failed probe')}`,
    `discovery: every ${formatDurationMs(config.discovery.intervalMs)}, timeout ${formatDurationMs(config.discovery.timeoutMs)}, ` +
      `max body ${formatSizeBytes(config.discovery.maxBodyBytes)}, miss wait ${formatDurationMs(config.discovery.missWaitMs)}, ` +
      `miss cooldown ${formatDurationMs(config.discovery.missCooldownMs)}`,
    `load: every ${formatDurationMs(config.load.intervalMs)}, timeout ${formatDurationMs(config.load.timeoutMs)}, ` +
      `stale after ${formatDurationMs(config.load.staleAfterMs)}`,
    describeUpstream(config.upstream),
    describeRouting(config.routing),
    ...featureSummary(config),
    ...configWarnings(config).map((warning) => `warning: ${warning.message}`),
  ];
}

function describeServer(server: GatewayConfig['server']): string {
  const workers = server.workers === 'auto' ? 'workers auto (one per core)' : plural(server.workers, 'worker');
  const cors =
    server.corsOrigins === '*'
      ? 'cors any origin'
      : server.corsOrigins.length === 0
        ? 'no cors'
        : `cors ${server.corsOrigins.join(', ')}`;
  const state =
    server.stateDir === undefined
      ? 'no state_dir (tenants’ daily token budgets start over on a restart)'
      : `state_dir ${server.stateDir}`;
  return (
    `listen: ${formatListenAddress(server.listen)} (max request body ${formatSizeBytes(server.maxRequestBodyBytes)}); ` +
    `${workers}; request timeout ${formatDurationMs(server.requestTimeoutMs)}, drain ${formatDurationMs(server.drainTimeoutMs)}; ` +
    `${plural(server.apiKeys.length, 'api key')}; ${cors}; ${state}`
  );
}

function describeAdmin(admin: GatewayConfig['admin']): string {
  const where = admin.listen === undefined ? 'on the main listener' : `on ${formatListenAddress(admin.listen)}`;
  const hosts = admin.hosts.length === 0 ? '' : `, hosts ${admin.hosts.join(', ')}`;
  return `admin: ${where}, token ${admin.token === undefined ? 'not set' : 'set'}${hosts}`;
}

function describeNodes(nodes: GatewayConfig['nodes']): string[] {
  return [
    `nodes (${nodes.length}):`,
    ...nodes.map((node) => {
      const extras = [node.group === undefined ? '' : `group ${node.group}`, node.apiKey === undefined ? '' : 'api key set'];
      const suffix = extras.filter((extra) => extra !== '').join(', ');
      return `  ${node.name}  ${node.kind}  ${node.url}${suffix === '' ? '' : `  (${suffix})`}`;
    }),
  ];
}

/** Each `[[node_sources]]` entry: what it asks, where, and what its nodes are (the api key only as set). */
function describeNodeSources(sources: NonNullable<GatewayConfig['nodeSources']>): string[] {
  if (sources.length === 0) return [];
  return [`node sources (${sources.length}):`, ...sources.map(describeNodeSource)];
}

function describeNodeSource(source: NonNullable<GatewayConfig['nodeSources']>[number]): string {
  const extras = [source.group === undefined ? '' : `group ${source.group}`, source.apiKey === undefined ? '' : 'api key set'];
  const suffix = extras.filter((extra) => extra !== '').join(', ');
  const tail = suffix === '' ? '' : `  (${suffix})`;
  if (source.kind === 'kubernetes') {
    const port = source.portName === undefined ? "the slices' only port" : `port ${source.portName}`;
    const api = source.kubeconfig === undefined ? 'in-cluster service account' : `kubeconfig ${source.kubeconfig}`;
    const context = source.context === undefined ? '' : ` context ${source.context}`;
    return (
      `  ${source.name}  kubernetes EndpointSlices of ${source.namespace}/${source.service} (${port})  ${source.nodeKind}  ` +
      `${api}${context}, each read within ${formatDurationMs(source.timeoutMs)}, watch ${formatDurationMs(source.watchMs)}${tail}`
    );
  }
  const asked = source.query.type === 'address' ? `${source.query.host} port ${source.query.port}` : `SRV ${source.query.record}`;
  const resolver = source.resolver === undefined ? 'system resolver' : `resolver ${source.resolver.host}:${source.resolver.port}`;
  return (
    `  ${source.name}  dns ${asked}  ${source.nodeKind}  ${resolver}, every ${formatDurationMs(source.intervalMs)} ` +
    `(ttl ${formatDurationMs(source.minTtlMs)}..${formatDurationMs(source.maxTtlMs)})${tail}`
  );
}

function describeModels(models: GatewayConfig['models']): string[] {
  const desired = models.available.map((model) => model.desired).filter((d) => d !== undefined);
  const pins = desired.filter((d) => d.pin).length;
  const preloads = desired.filter((d) => d.preload).length;
  const warm = desired.reduce((sum, d) => sum + d.warm, 0);
  const declared =
    models.available.length === 0 ? 'none declared (discovered from nodes)' : `${models.available.length} declared:`;
  return [
    `models: default ${models.default ?? '(none)'}; ${declared}`,
    ...models.available.map((model) => `  ${describeModel(model)}`),
    `model states: ${plural(pins, 'pin')}, ${plural(preloads, 'preload')}, ${warm} warm node${warm === 1 ? '' : 's'} asked ` +
      `(the reconciler's desired state); an operator's load held ${formatDurationMs(models.operatorHoldMs)}`,
  ];
}

function describeModel(model: ModelSpec): string {
  const d = model.desired;
  const extras = [
    model.group === undefined ? '' : `group ${model.group}`,
    model.aliases.length === 0 ? '' : `aliases ${model.aliases.join(', ')}`,
    d?.pin === true ? 'pinned' : '',
    d?.preload === true ? 'preloaded' : '',
    d !== undefined && d.warm > 0 ? `warm on ${plural(d.warm, 'node')}` : '',
  ];
  const suffix = extras.filter((extra) => extra !== '').join('; ');
  const policy = model.policy === undefined ? '' : `  policy ${model.policy}`;
  return `${suffix === '' ? model.name : `${model.name}  (${suffix})`}${policy}`;
}

function describeUpstream(upstream: GatewayConfig['upstream']): string {
  return (
    `upstream: connect timeout ${formatDurationMs(upstream.connectTimeoutMs)}, ` +
    `headers timeout ${formatDurationMs(upstream.headersTimeoutMs)}, body idle timeout ${formatDurationMs(upstream.bodyIdleTimeoutMs)}, ` +
    `first-token deadline ${upstream.firstTokenTimeoutMs === 0 ? 'off' : formatDurationMs(upstream.firstTokenTimeoutMs)}, ` +
    `eject after ${plural(upstream.ejectAfterFailures, 'failure')} for ${formatDurationMs(upstream.ejectForMs)}, ` +
    `${upstream.maxConnections} connections a node`
  );
}

function describeRouting(routing: GatewayConfig['routing']): string {
  return (
    `routing: policy ${routing.policy}, queue up to ${routing.maxQueue} for ${formatDurationMs(routing.queueTimeoutMs)}, ` +
    `load on demand ${routing.loadOnDemand ? 'on' : 'off'}`
  );
}
