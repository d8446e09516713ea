// The mesh feature (`[mesh]`): builds the MeshService (its codec from the site key, its transport
// from the factory), wires its logs and metrics, feeds it the registry's changes and reloads, and
// gives the request plane its link to the other sites (forwarding, accepting forwards). Listed by
// gateway/features.ts only when `[mesh]` is configured (or a caller gives the link); the rules it
// wires by are mesh-placement.ts's.

import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { AdminView, Feature } from '#src/core/feature.ts';
import type { SitesSource } from '#src/core/site-rows.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import { MESH_DEFAULTS, type MeshConfig } from './config/mesh-config.ts';
import type { NodeView, RegistryEvents } from '#src/nodes/index.ts';
import type { RemoteSiteView } from '#src/routing/remote/remote-site.ts';
import type { MeshEvents } from './mesh-events.ts';
import type { MeshService } from './mesh-service.ts';
import type { MeshTransportStats } from './transport.ts';
import { sitesDocument } from './sites-document.ts';
import { pinnedPublicKey } from './pinned-key.ts';
import {
  fileExists,
  localReplayGuard,
  MAX_REMEMBERED_FORWARDS,
  meshLinkFor,
  FORWARDED_REPORTS,
  replayOp,
  replayRecordFile,
  ReplayKeeper,
} from './forwarding/index.ts';
import type { SeenForwards, ClaimVerdict, ForwardClaim, MeshLink, ReplayOp } from './forwarding/index.ts';
import type { SiteKey } from './site-key.ts';
import type { PublishGate } from './publish-gate.ts';
import { revisionStateFile } from './revision-state-file.ts';
import { registerMeshMetrics } from './mesh-metrics.ts';
import { subscribeMeshLogs } from './mesh-log.ts';
import type { MeshOptions } from './mesh-options.ts';
import {
  listingChanged,
  MESH_REPLICAS_SHARE_A_PEER_ID,
  meshStateFile,
  remoteSiteCount,
  replayRecordPath,
  replicasSharePeerId,
  SET_CHANGES,
} from './mesh-placement.ts';

export interface MeshFeatureDeps {
  readonly options: MeshOptions | undefined;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: () => MeshConfig | undefined;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly nodeViews: () => readonly NodeView[];
  readonly inFlight: (node: string) => number;
  readonly queueDepths: () => Readonly<Record<string, number>>;
  /** The request path's link given by the caller; absent = built here from [mesh] and this feature. */
  readonly link?: MeshLink | undefined;
  /** [cluster]: the site's record is published only by the replica holding the leader lease. */
  readonly publishGate?: PublishGate | undefined;
}

/** What the mesh adds to the owner's parts (gateway/features.ts names them). */
export interface MeshParts {
  /** The request plane's link to the other sites. */
  readonly sites: MeshLink | undefined;
  /** What request workers forward and verify with ([mesh] configured only). */
  readonly workersMesh: MeshFeature | undefined;
  /** Every pinned remote site, fresh or stale (model labels, the dashboard). */
  readonly remoteSites: () => readonly RemoteSiteView[];
  /** The dashboard's feed of site events and its Sites view's source (this site's row and every pinned one's). */
  readonly dashboardSites: { readonly events: EventBus<MeshEvents>; readonly sites: () => SitesSource | undefined };
}

export class MeshFeature implements Feature<GatewayConfig, MeshParts> {
  readonly name = 'mesh';
  readonly parts: MeshParts;
  /** A forward's sender in the request log (its own field of the request: forwarded-line.ts). */
  readonly reports = FORWARDED_REPORTS;
  readonly events: EventBus<MeshEvents>;
  /** What forwarding needs ([mesh] only): this site's key once loaded, these sites, the pins in force. */
  readonly link: MeshLink | undefined;
  readonly #deps: MeshFeatureDeps;
  /** This gateway's memory of used forward signatures (the link's, unless a caller gave the link). */
  readonly #seen: SeenForwards | undefined;
  /** Carries the memory across a clean restart (this thread holds it and a record file is kept). */
  readonly #keeper: ReplayKeeper | undefined;
  /** When this gateway's replay memory began (wall-clock ms). */
  readonly #replayStartedMs: number;
  #registry: Registry | undefined;
  #service: MeshService | undefined;
  #key: SiteKey | undefined;
  readonly #offs: (() => void)[] = [];

  constructor(deps: MeshFeatureDeps) {
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
    this.parts = {
      sites: this.link,
      workersMesh: deps.config() === undefined ? undefined : this,
      remoteSites: () => this.sites(),
      dashboardSites: { events: this.events, sites: () => this.admin() },
    };
  }

  #replayKeeper(path: string, seen: SeenForwards): ReplayKeeper {
    const deps = this.#deps;
    const stateFile = meshStateFile(deps.options, deps.config());
    return new ReplayKeeper({
      store: replayRecordFile(path),
      seen,
      now: () => deps.clock.now(),
      log: deps.logger,
      maxEntries: () => deps.config()?.maxRememberedForwards ?? MAX_REMEMBERED_FORWARDS,
      skewMs: () => deps.config()?.maxClockSkewMs ?? MESH_DEFAULTS.maxClockSkewMs,
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

  /** Its series are registered when the mesh starts (they read the running service). */
  metrics(registry: Registry): void {
    this.#registry = registry;
  }

  /** Loads the site key, starts the transport and the first publication. Throws when [mesh] cannot run. */
  async start(): Promise<void> {
    const config = this.#deps.config();
    if (config === undefined || this.#service !== undefined) return;
    const { options, logger } = this.#deps;
    // Federation loads with the first [mesh] start, not with the gateway: one without [mesh] never
    // holds the mesh service, its record crypto or libp2p (docs/performance.md, "Lean process").
    const { loadSiteKey, MeshService, ownPinProblem, siteCodec, siteLoad, siteSources } = await import('./index.ts');
    const key = options?.key ?? (await loadSiteKey(config.keyFile));
    const mismatch = ownPinProblem(config.site, config.sites, key);
    if (mismatch !== undefined) throw new Error(mismatch);
    const codec = siteCodec(key);
    // The libp2p identity: this replica's own peer key when set (replicas of one site must not share a peer id), else the site key.
    const peerKey = options?.key === undefined && config.peerKeyFile !== undefined ? await loadSiteKey(config.peerKeyFile) : key;
    const peerId = peerKey.peerId;
    const newTransport =
      options?.transport ?? (await import('./mesh-transport.ts')).libp2pTransportFor(peerKey, config, this.#deps.clock, logger);
    const transport = newTransport({ site: config.site, peerId, listen: config.listen, peers: config.peers });
    const stateFile = meshStateFile(options, config);
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
    const registry = this.#registry;
    this.#offs.push(
      subscribeMeshLogs(logger, this.events),
      ...(registry === undefined
        ? []
        : [
            registerMeshMetrics(registry, {
              events: this.events,
              sites: () => this.sites(),
              transportStats: () => this.#stats(),
              replay: this.#seen,
            }),
          ]),
      ...SET_CHANGES.map((name) => this.#deps.registryEvents.on(name, () => service.modelsMayHaveChanged())),
      this.#deps.registryEvents.on('node:discovery', ({ from, to }) => {
        if (listingChanged(from, to)) service.modelsMayHaveChanged();
      }),
    );
    this.#service = service;
    this.#key = key;
    await service.start();
    logger.info({ site: config.site, peer_id: peerId, pinned: config.sites.length }, 'mesh started');
    if (replicasSharePeerId(this.#deps.publishGate !== undefined, peerId, key.peerId))
      logger.warn({ site: config.site, peer_id: peerId }, MESH_REPLICAS_SHARE_A_PEER_ID);
  }

  /** A reload: the pins, peers, timings and caps of the next `[mesh]` apply live (reconfigure). */
  reload(previous: GatewayConfig, next: GatewayConfig): void {
    this.reconfigure(previous.mesh, next.mesh);
  }

  /**
   * A reload: pins, peers, timings and caps apply live. The site's identity (id, url, key) and its
   * sockets stay as started (the mesh table's restartOnly, mesh/config/mesh-table.ts, tells the operator), as does adding or removing [mesh].
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

  /** Its admin view: GET /admin/sites (mesh = false until the mesh runs). */
  adminViews(): Readonly<Record<string, AdminView>> {
    return { '/admin/sites': () => sitesDocument(this.admin()) };
  }

  /** This site's row and every pinned one's (/admin/sites, the dashboard); undefined until the mesh runs. */
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
