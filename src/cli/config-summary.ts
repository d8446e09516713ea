// What `switchyard check-config` prints for a valid config: one line (or a block) per section —
// server, admin, nodes, models (with pins, preloads and warm counts), health, discovery, load,
// upstream, routing, tenants (each with its limits), the request log, tracing, [mesh] and
// [cluster] — each as the gateway would run it, so what a section sets (or leaves at its defaults)
// can be read at a glance. Secrets (API keys, the admin token, tenant keys, the store password)
// are never printed: only whether they are set, and how many.
import {
  formatDurationMs,
  formatListenAddress,
  formatSizeBytes,
  meshOpenToClients,
  MESH_OPEN_TO_CLIENTS,
  type GatewayConfig,
  type ModelSpec,
  type TenantSpec,
} from '#src/config/index.ts';

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
    ...describeTenants(config.tenants),
    describeLog(config.log),
    describeTracing(config.tracing),
    describeMesh(config.mesh),
    describeCluster(config.cluster),
    ...(meshOpenToClients(config) ? [`warning: ${MESH_OPEN_TO_CLIENTS}`] : []),
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

function describeTenants(tenants: readonly TenantSpec[]): string[] {
  if (tenants.length === 0) return ['tenants: none (no client key asked: every request is the tenant default, without limits)'];
  return [`tenants (${tenants.length}):`, ...tenants.map((tenant) => `  ${describeTenant(tenant)}`)];
}

function describeTenant(tenant: TenantSpec): string {
  const limits = [
    tenant.maxConcurrent === undefined ? '' : `${tenant.maxConcurrent} at once`,
    tenant.requestsPerMinute === undefined ? '' : `${tenant.requestsPerMinute} requests/min`,
    tenant.tokensPerMinute === undefined ? '' : `${tenant.tokensPerMinute} tokens/min`,
    tenant.tokensPerDay === undefined ? '' : `${tenant.tokensPerDay} tokens/day`,
  ].filter((limit) => limit !== '');
  const models = tenant.models.length === 1 && tenant.models[0] === '*' ? 'every model' : `models ${tenant.models.join(', ')}`;
  const sites =
    tenant.sites === undefined ? '' : tenant.sites.length === 0 ? ', this site only' : `, sites ${tenant.sites.join(', ')}`;
  return (
    `${tenant.name}  ${plural(tenant.keys.length, 'key')}, ${tenant.priority} (weight ${tenant.weight}), ${models}${sites}; ` +
    `limits: ${limits.length === 0 ? 'none' : limits.join(', ')}`
  );
}

function describeLog(log: GatewayConfig['log']): string {
  const requests = log?.requests ?? { kind: 'off' as const };
  if (log === undefined || requests.kind === 'off') return 'request log: off';
  const where = requests.kind === 'stdout' ? 'to standard output' : `to ${requests.path}`;
  const rotation =
    requests.kind === 'file'
      ? `, rotated at ${formatSizeBytes(log.requestsMaxBytes)} keeping ${plural(log.requestsKeep, 'file')}`
      : '';
  const bodies = log.bodies ? `, prompt text up to ${formatSizeBytes(log.bodiesMaxBytes)} a line` : ', no prompt text';
  return `request log: ${where}${rotation}${bodies}`;
}

function describeTracing(tracing: GatewayConfig['tracing']): string {
  if (tracing === undefined) return 'tracing: off';
  return `tracing: OTLP to ${tracing.otlpEndpoint} as ${tracing.serviceName}, sampling ${tracing.sampleRatio * 100}% of traces`;
}

function describeMesh(mesh: GatewayConfig['mesh']): string {
  if (mesh === undefined) return 'mesh: none (this gateway runs alone)';
  const pins = mesh.sites.map((pin) => pin.id).join(', ');
  return (
    `mesh: site ${mesh.site} at ${mesh.url}, ${plural(mesh.peers.length, 'bootstrap peer')}, ` +
    `${plural(mesh.sites.length, 'pinned site')}${pins === '' ? '' : ` (${pins})`}, ` +
    `heartbeat ${formatDurationMs(mesh.heartbeatMs)}, fresh for ${formatDurationMs(mesh.freshnessMs)}`
  );
}

function describeCluster(cluster: GatewayConfig['cluster']): string {
  if (cluster === undefined) return 'cluster: none (one replica: its limits are this process’s own)';
  const replica = cluster.replica === undefined ? 'replica named by host and pid' : `replica ${cluster.replica}`;
  return (
    `cluster: store ${cluster.store} (password ${cluster.password === undefined ? 'not set' : 'set'}), ${replica}, ` +
    `lease ${formatDurationMs(cluster.leaseTtlMs)}, prefix ${cluster.prefix}`
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
