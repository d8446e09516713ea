// The federation part of one gateway: builds the MeshService when `[mesh]` is configured (its
// codec from the site key, its transport from the factory), wires its logs and metrics, feeds it
// the registry's changes and reloads. Without `[mesh]` it does nothing and `sites()` is empty.

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { GatewayConfig, MeshConfig } from '#src/config/types.ts';
import { CONFIG_DEFAULTS } from '#src/config/index.ts';
import type { NodeRegistry, NodeView, RegistryEvents } from '#src/nodes/index.ts';
import type { MeshEvents, MeshService, MeshTransportStats } from '#src/mesh/index.ts';
import { pinnedPublicKey } from '#src/mesh/pinned-key.ts';
import {
  fileExists,
  localReplayGuard,
  MAX_REMEMBERED_FORWARDS,
  meshLinkFor,
  replayOp,
  replayRecordFile,
  replayRecordFileFor,
  ReplayKeeper,
} from '#src/mesh/forwarding/index.ts';
import type { SeenForwards, ClaimVerdict, ForwardClaim, MeshLink, ReplayOp } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import type { PublishGate } from '#src/mesh/publish-gate.ts';
import { revisionStateFile, stateFileFor } from '#src/mesh/revision-state-file.ts';
import type { RemoteSiteView } from '#src/routing/remote/remote-site.ts';
import { registerMeshMetrics } from '#src/metrics/mesh-metrics.ts';
import { subscribeMeshLogs } from '#src/logs/mesh-log.ts';
import type { SitesSource } from '#src/admin/sites-view.ts';
import type { GatewayOptions, MeshOptions } from './options.ts';

/** Said at start by a replica ([cluster] with [mesh]) whose libp2p identity is the site key (docs/deploy.md). */
export const MESH_REPLICAS_SHARE_A_PEER_ID =
  "[mesh] with [cluster] and no [mesh] peer_key_file: every replica of this site shares the site key's libp2p peer id, and a peer site keeps one gossip stream per peer id, so it hears one replica only (the others learn no other site; when the publisher dies the site turns stale there). Give each replica its own peer_key_file (switchyard keygen) and list each replica's address in the other sites' [mesh] peers";

export interface MeshPartDeps {
  readonly options: MeshOptions | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: () => MeshConfig | undefined;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly nodeViews: () => readonly NodeView[];
  readonly inFlight: (node: string) => number;
  readonly queueDepths: () => Readonly<Record<string, number>>;
  readonly metrics: Registry;
  /** The request path's link given by the caller; absent = built here from [mesh] and this part. */
  readonly link?: MeshLink | undefined;
  /** [cluster]: the site's record is published only by the replica holding the leader lease. */
  readonly publishGate?: PublishGate | undefined;
}

/** What the gateway's parts offer a mesh part (GatewayParts is one). */
export interface MeshHost {
  readonly options: GatewayOptions;
  readonly clock: Clock;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly registry: Pick<NodeRegistry, 'views' | 'inFlight'>;
  readonly scheduler: { queueDepths(): Readonly<Record<string, number>> };
  readonly metrics: { readonly registry: Registry };
  /** [cluster] with [mesh] at start: the leader lease's gate. */
  readonly publishGate?: PublishGate | undefined;
  config(): GatewayConfig;
}

/** The mesh part of a gateway's parts; everything it reads of them is read when needed. */
export function meshPartFor(host: MeshHost): MeshPart {
  return new MeshPart({
    options: host.options.meshGossip,
    logger: host.options.logger,
    clock: host.clock,
    config: () => host.config().mesh,
    registryEvents: host.registryEvents,
    nodeViews: () => host.registry.views(),
    inFlight: (node) => host.registry.inFlight(node),
    queueDepths: () => host.scheduler.queueDepths(),
    metrics: host.metrics.registry,
    link: host.options.mesh,
    publishGate: host.publishGate,
  });
}

/** The remote sites pinned in `config` (its own pin aside): how many shares the replay memory has. */
function remoteSiteCount(config: MeshConfig | undefined): number {
  return config === undefined ? 0 : config.sites.filter((pin) => pin.id !== config.site).length;
}

/** Where this gateway keeps its replay record (MeshOptions.replayFile), or false for none. */
function replayRecordPath(options: MeshOptions | undefined, config: MeshConfig | undefined, clustered: boolean): string | false {
  if (options?.replayFile !== undefined) return options.replayFile;
  if (config === undefined || options?.key !== undefined || options?.replaySinceMs !== undefined) return false;
  // Replicas of a site sharing key_file would overwrite each other's record: each needs its own peer_key_file.
  if (clustered && config.peerKeyFile === undefined) return false;
  return replayRecordFileFor(config);
}

/** Registry changes that may change this site's model set (listings are watched apart: they repeat every poll). */
const SET_CHANGES = ['node:health-changed', 'node:capacity', 'node:added', 'node:removed', 'node:wake'] as const;

export class MeshPart {
  readonly events: EventBus<MeshEvents>;
  /** What forwarding needs ([mesh] only): this site's key once loaded, these sites, the pins in force. */
  readonly link: MeshLink | undefined;
  readonly #deps: MeshPartDeps;
  /** This gateway's memory of used forward signatures (the link's, unless a caller gave the link). */
  readonly #seen: SeenForwards | undefined;
  /** Carries the memory across a clean restart (this thread holds it and a record file is kept). */
  readonly #keeper: ReplayKeeper | undefined;
  /** When this gateway's replay memory began (wall-clock ms). */
  readonly #replayStartedMs: number;
  #service: MeshService | undefined;
  #key: SiteKey | undefined;
  readonly #offs: (() => void)[] = [];

  constructor(deps: MeshPartDeps) {
    this.#deps = deps;
    this.events = new EventBus<MeshEvents>((error) => deps.logger.error({ err: error }, 'mesh event listener failed'));
    // One memory of accepted forwards for the gateway: request workers ask this thread's (claimForward).
    // Split into one share per remote site pinned now; it began now unless a test says otherwise.
    // With a replay record it takes no forward until start() restored it from the run before.
    const recordPath =
      deps.link === undefined ? replayRecordPath(deps.options, deps.config(), deps.publishGate !== undefined) : false;
    this.#replayStartedMs = deps.options?.replaySinceMs ?? deps.clock.now();
    const replay = localReplayGuard(() => deps.clock.now(), {
      sinceMs: this.#replayStartedMs,
      capacity: () => deps.config()?.maxRememberedForwards ?? MAX_REMEMBERED_FORWARDS,
      remoteSites: () => remoteSiteCount(deps.config()),
      starting: recordPath !== false,
    });
    this.link =
      deps.link ??
      meshLinkFor(
        () => ({ mesh: deps.config() }),
        () => this.#key,
        this,
        replay,
        pinnedPublicKey,
      );
    this.#seen = deps.link === undefined ? replay.seen : undefined;
    this.#keeper = recordPath === false ? undefined : this.#replayKeeper(recordPath, replay.seen);
  }

  #replayKeeper(path: string, seen: SeenForwards): ReplayKeeper {
    const deps = this.#deps;
    const options = deps.options;
    const config = deps.config();
    const stateFile =
      options?.stateFile ?? (options?.key === undefined && config !== undefined ? stateFileFor(config.keyFile) : false);
    return new ReplayKeeper({
      store: replayRecordFile(path),
      seen,
      now: () => deps.clock.now(),
      log: deps.logger,
      maxEntries: () => deps.config()?.maxRememberedForwards ?? MAX_REMEMBERED_FORWARDS,
      skewMs: () => deps.config()?.maxClockSkewMs ?? CONFIG_DEFAULTS.mesh.maxClockSkewMs,
      ranBefore: () => (stateFile === false ? Promise.resolve(false) : fileExists(stateFile)),
    });
  }

  /** Holds, uses or releases a forwarded request's signature (for a request worker that verified it). */
  claimForward(claim: ForwardClaim, op: ReplayOp): ClaimVerdict | Promise<ClaimVerdict> {
    const link = this.link;
    if (link === undefined) return { ok: false, rejection: 'replayed', detail: 'this gateway has no [mesh] section' };
    return replayOp(link.replay, claim, op);
  }

  /** This site's key, once the mesh has started. */
  key(): SiteKey | undefined {
    return this.#key;
  }

  /** Loads the site key, starts the transport and the first publication. Throws when [mesh] cannot run. */
  async start(): Promise<void> {
    const config = this.#deps.config();
    if (config === undefined || this.#service !== undefined) return;
    const { options, logger } = this.#deps;
    // Federation loads with the first [mesh] start, not with the gateway: one without [mesh] never
    // holds the mesh service, its record crypto or libp2p (docs/performance.md, "Lean process").
    const { loadSiteKey, MeshService, ownPinProblem, siteCodec, siteLoad, siteSources } = await import('#src/mesh/index.ts');
    const key = options?.key ?? (await loadSiteKey(config.keyFile));
    const mismatch = ownPinProblem(config.site, config.sites, key);
    if (mismatch !== undefined) throw new Error(mismatch);
    const codec = siteCodec(key);
    // The libp2p identity: this replica's own peer key when set (replicas of one site must not share a peer id), else the site key.
    const peerKey = options?.key === undefined && config.peerKeyFile !== undefined ? await loadSiteKey(config.peerKeyFile) : key;
    const peerId = peerKey.peerId;
    const newTransport =
      options?.transport ??
      (await import('#src/mesh/mesh-transport.ts')).libp2pTransportFor(peerKey, config, this.#deps.clock, logger);
    const transport = newTransport({ site: config.site, peerId, listen: config.listen, peers: config.peers });
    const stateFile = options?.stateFile ?? (options?.key === undefined ? stateFileFor(config.keyFile) : false);
    // Before the mesh state file is written and before any forward is taken (the memory is closed until then).
    await this.#keeper?.restore({ site: config.site, publicKey: key.publicKey }, this.#replayStartedMs);
    const service = new MeshService({
      config,
      clock: this.#deps.clock,
      transport,
      codec,
      sources: siteSources({ nodeViews: this.#deps.nodeViews, staticModels: () => this.#deps.config()?.staticModels ?? [] }),
      load: () => siteLoad(this.#deps.nodeViews(), this.#deps.inFlight, this.#deps.queueDepths()),
      events: this.events,
      revisions: stateFile === false ? undefined : revisionStateFile(stateFile),
      publishGate: this.#deps.publishGate,
    });
    this.#offs.push(
      subscribeMeshLogs(logger, this.events),
      registerMeshMetrics(this.#deps.metrics, {
        events: this.events,
        sites: () => this.sites(),
        transportStats: () => this.#stats(),
        replay: this.#seen,
      }),
      ...SET_CHANGES.map((name) => this.#deps.registryEvents.on(name, () => service.modelsMayHaveChanged())),
      this.#deps.registryEvents.on('node:discovery', ({ from, to }) => {
        if (from.phase !== to.phase || from.models !== to.models) service.modelsMayHaveChanged();
      }),
    );
    this.#service = service;
    this.#key = key;
    await service.start();
    logger.info({ site: config.site, peer_id: peerId, pinned: config.sites.length }, 'mesh started');
    if (this.#deps.publishGate !== undefined && peerId === key.peerId)
      logger.warn({ site: config.site, peer_id: peerId }, MESH_REPLICAS_SHARE_A_PEER_ID);
  }

  /**
   * A reload: pins, peers, timings and caps apply live. The site's identity (id, url, key) and its
   * sockets stay as started (restart-only.ts tells the operator), as does adding or removing [mesh].
   */
  reconfigure(previous: MeshConfig | undefined, next: MeshConfig | undefined): void {
    const service = this.#service;
    if (service === undefined || previous === undefined || next === undefined) return;
    try {
      service.reconfigure({
        ...next,
        site: previous.site,
        url: previous.url,
        keyFile: previous.keyFile,
        listen: previous.listen,
      });
    } catch (error) {
      // Config validation rejects bad pins first; this keeps a reload from half-applying if one slips through.
      this.#deps.logger.error({ err: error }, 'mesh settings not applied; keeping the previous pins');
    }
  }

  /** Every pinned remote site, fresh or stale (empty when alone). */
  sites(): readonly RemoteSiteView[] {
    return this.#service?.sites() ?? [];
  }

  /** The /admin/sites source; undefined when the gateway runs alone. */
  admin(): SitesSource | undefined {
    const service = this.#service;
    return service === undefined ? undefined : { own: () => service.ownRow(), remote: () => service.adminRows() };
  }

  #stats(): MeshTransportStats | undefined {
    return this.#service?.transportStats();
  }

  async stop(): Promise<void> {
    // After the drain: no forward is taken once the memory is sealed, so the record holds all this run took.
    await this.#keeper?.save();
    for (const off of this.#offs.splice(0)) off();
    await this.#service?.stop();
  }
}
