// Ties one site's federation together: its sources → the publisher → the transport, and the
// transport → the acceptance function → the remote-site store, with the heartbeat and freshness
// timers. Decisions live in pure functions (publisher.ts, freshness.ts, site-models.ts, the
// acceptance function); this class only holds their state and does the I/O.

import type { Clock, Timer } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import type { RemoteSiteView } from '#src/routing/remote/remote-site.ts';
import type { DiscoverySource } from './discovery-source.ts';
import { freshnessChanges, isFresh, nextExpiry } from './freshness.ts';
import type { Judgement } from './judgement.ts';
import type { MeshCodec } from './mesh-codec.ts';
import type { MeshEvents } from './mesh-events.ts';
import { OwnModelSet } from './own-set.ts';
import { decidePublication, INITIAL_PUBLISHER, type PublishKind, type PublishTrigger } from './publisher.ts';
import type { SiteRecord, SiteRecordLoad, SiteRecordModel } from './site-record.ts';
import { RemoteSiteStore, type SiteAdminRow } from './site-store.ts';
import type { MeshTransport, MessageVerdict } from './transport.ts';
import { decodeWant, encodeWant } from './record-codec.ts';
import { mayWant, type WantHistory } from './want.ts';
import { RejectionLog } from './rejection-log.ts';
import { RevisionKeeper } from './revision-keeper.ts';
import type { RevisionStore } from './revision-state-file.ts';
import { applicableRevisions } from './revision-state.ts';
import { meshTrust, type MeshTrust } from './mesh-trust.ts';
import { verdictOf } from './verdict.ts';
import type { PublishGate } from './publish-gate.ts';

/** A want is {"want": "<site id>"}: a site id is at most 64 characters. */
const MAX_WANT_BYTES = 128;

export interface MeshServiceDeps {
  readonly config: MeshConfig;
  readonly clock: Clock;
  readonly transport: MeshTransport;
  readonly codec: MeshCodec;
  readonly sources: readonly DiscoverySource[];
  /** This site's load now (scheduler queues, in-flight requests, slots over healthy nodes). */
  readonly load: () => SiteRecordLoad;
  readonly events: EventBus<MeshEvents>;
  /** Where the highest accepted revisions survive restarts (the state file beside the key); absent = memory only. */
  readonly revisions?: RevisionStore | undefined;
  /** [cluster]: publish only while this replica holds the site's leader lease; absent = always. */
  readonly publishGate?: PublishGate | undefined;
}

/** This site's own side, for /admin/sites. */
export interface OwnSiteRow {
  readonly id: string;
  readonly url: string;
  readonly revision: number | undefined;
  readonly models: readonly SiteRecordModel[];
  readonly published_at: string | undefined;
  readonly peers: number;
}

export class MeshService {
  readonly #deps: MeshServiceDeps;
  #config: MeshConfig;
  #trust: MeshTrust;
  readonly #store: RemoteSiteStore;
  readonly #rejections = new RejectionLog();
  readonly #keeper: RevisionKeeper | undefined;
  readonly #own: OwnModelSet;
  #publisher = INITIAL_PUBLISHER;
  #lastRevision: number | undefined;
  #lastPublishedAtWall: number | undefined;
  #heartbeat: Timer | undefined;
  #freshnessTimer: Timer | undefined;
  #reported = new Map<string, boolean>();
  readonly #wantsSent = new Map<string, WantHistory>();
  /** Publications go out in revision order. */
  #sending: Promise<void> = Promise.resolve();
  #running = false;

  constructor(deps: MeshServiceDeps) {
    this.#deps = deps;
    this.#config = deps.config;
    this.#trust = meshTrust(deps.config, deps.codec);
    this.#store = new RemoteSiteStore({
      ownSite: deps.config.site,
      pins: deps.config.sites,
      digestOf: (m) => deps.codec.digestOf(m),
    });
    this.#own = new OwnModelSet(deps.sources);
    this.#keeper =
      deps.revisions === undefined
        ? undefined
        : new RevisionKeeper(
            deps.revisions,
            deps.clock,
            () => this.#store.heldRevisions(),
            (problem) => deps.events.emit('mesh:state-failed', { problem }),
          );
    deps.transport.admit(this.#trust.admission);
    deps.transport.onMessage((data, peer) => this.#receive(data, peer));
    deps.transport.onPeerJoined(() => this.#consider('peer_joined'));
    // [cluster]: a replica that becomes the site's publisher starts over (its first record in full).
    deps.publishGate?.onChange(() => this.#consider('check', INITIAL_PUBLISHER));
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    if (this.#keeper !== undefined) this.#store.restore(applicableRevisions(await this.#keeper.read(), this.#config.sites));
    this.#deps.transport.setPeers(this.#config.peers);
    await this.#deps.transport.start();
    // 'check': the first record goes out in full now, unless a peer's join already sent it.
    this.#consider('check');
    this.#scheduleHeartbeat();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#heartbeat?.cancel();
    this.#freshnessTimer?.cancel();
    await this.#sending;
    await this.#deps.transport.stop();
    await this.#keeper?.flush();
  }

  /**
   * A reload: pins, peers, timings and caps change, learned state stays (except for sites no
   * longer pinned or re-keyed). `site` and `key_file` need a restart (the caller warns).
   */
  reconfigure(next: MeshConfig): void {
    const previous = this.#config;
    this.#trust = meshTrust(next, this.#deps.codec);
    this.#config = next;
    this.#store.setPins(next.sites, next.site);
    this.#deps.transport.admit(this.#trust.admission);
    this.#reported = new Map([...this.#reported].filter(([site]) => this.#trust.pins.has(site)));
    if (next.peers.join('\n') !== previous.peers.join('\n')) this.#deps.transport.setPeers(next.peers);
    if (next.heartbeatMs !== previous.heartbeatMs && this.#running) this.#scheduleHeartbeat();
    this.#checkFreshness();
    this.#consider('check');
  }

  /** The node registry changed (listings, health): publish at once if the set changed. */
  modelsMayHaveChanged(): void {
    if (this.#running) this.#consider('check');
  }

  /** Every pinned remote site, fresh or stale: what routing judges. */
  sites(): readonly RemoteSiteView[] {
    return this.#store.views(this.#deps.clock.monotonicMs(), this.#config.freshnessMs);
  }

  adminRows(): SiteAdminRow[] {
    return this.#store.adminRows(this.#deps.clock.monotonicMs(), this.#config.freshnessMs);
  }

  ownRow(): OwnSiteRow {
    const at = this.#lastPublishedAtWall;
    return {
      id: this.#config.site,
      url: this.#config.url,
      revision: this.#lastRevision,
      models: this.#own.current(),
      published_at: at === undefined ? undefined : new Date(at).toISOString(),
      peers: this.#deps.transport.stats().peers,
    };
  }

  transportStats(): ReturnType<MeshTransport['stats']> {
    return this.#deps.transport.stats();
  }

  #scheduleHeartbeat(): void {
    this.#heartbeat?.cancel();
    this.#heartbeat = this.#deps.clock.setTimeout(() => {
      if (!this.#running) return;
      this.#consider('heartbeat');
      this.#checkFreshness();
      this.#scheduleHeartbeat();
    }, this.#config.heartbeatMs);
  }

  #consider(trigger: PublishTrigger, from = this.#publisher): void {
    if (!this.#running || this.#deps.publishGate?.mayPublish() === false) return;
    const cap = this.#config.maxModelsPerSite;
    const own = this.#own.evaluate(this.#deps.clock.now(), cap);
    const decision = decidePublication(from, {
      trigger,
      models: own.models,
      url: this.#config.url,
      now: this.#deps.clock.monotonicMs(),
      heartbeatMs: this.#config.heartbeatMs,
    });
    this.#publisher = decision.next;
    if (decision.publish === undefined) return;
    if (decision.publish === 'full' && own.capped > 0) {
      this.#deps.events.emit('mesh:models-capped', {
        total: own.models.length + own.capped,
        cap,
        firstInEpisode: own.capEpisodeStarted,
      });
    }
    this.#publish(decision.publish, decision.why, own.models);
  }

  #publish(kind: PublishKind, why: string, models: readonly SiteRecordModel[]): void {
    const wall = this.#deps.clock.now();
    const revision = this.#deps.codec.nextRevision(wall);
    const body = kind === 'full' ? { models } : { models_digest: this.#deps.codec.digestOf(models) };
    const record: SiteRecord = {
      v: 1,
      site: this.#config.site,
      url: this.#config.url,
      revision,
      issued_at: wall,
      ...body,
      load: this.#deps.load(),
    };
    let data: Uint8Array;
    try {
      data = this.#deps.codec.sign(record);
    } catch (error) {
      // A record receivers would reject (say a url that is not normalised): say so, keep running.
      this.#deps.events.emit('mesh:publish-failed', { kind, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    if (data.byteLength > this.#config.maxMessageBytes) {
      this.#deps.events.emit('mesh:publish-failed', {
        kind,
        error: `record of ${data.byteLength} bytes is over max_message_bytes ${this.#config.maxMessageBytes}`,
      });
      return;
    }
    this.#lastRevision = revision;
    this.#lastPublishedAtWall = wall;
    this.#send(
      data,
      () => this.#deps.events.emit('mesh:published', { kind, why, revision, bytes: data.byteLength, models: models.length }),
      kind,
    );
  }

  #send(data: Uint8Array, onSent: () => void, kind: PublishKind): void {
    this.#sending = this.#sending.then(() =>
      this.#deps.transport.publish(data).then(onSent, (error: unknown) => {
        this.#deps.events.emit('mesh:publish-failed', { kind, error: error instanceof Error ? error.message : String(error) });
      }),
    );
  }

  /** The transport's judging port: applies what is accepted and says whether the message goes on. */
  #receive(data: Uint8Array, peer: string): MessageVerdict {
    const wanted = decodeWant(data, MAX_WANT_BYTES);
    if (wanted !== undefined) {
      // Only sites and admitted peers may ask: a want makes its target publish in full, and an
      // outsider's want would only harvest records to replay.
      if (!this.#trust.admitted.has(peer)) {
        this.#deps.events.emit('mesh:want-ignored', { peer });
        return 'ignore';
      }
      if (wanted === this.#config.site) this.#consider('want');
      return 'accept';
    }
    const judgement = this.#judge(data);
    const now = this.#deps.clock.monotonicMs();
    const outcome = this.#store.apply(judgement, peer, now);
    if (outcome.kind === 'rejected') {
      const { reason, site, detail } = outcome;
      const knownAuthor = this.#trust.admitted.has(peer);
      const note = this.#rejections.note(peer, reason, now);
      this.#deps.events.emit('mesh:record-rejected', {
        reason,
        site,
        peer,
        detail,
        log: note.log,
        suppressed: note.suppressed,
        knownAuthor,
      });
      if (reason === 'unknown_digest' && site !== undefined && this.#trust.pins.has(site)) this.#want(site);
      return verdictOf({ kind: 'rejected', reason, site, detail });
    }
    if (outcome.full) this.#wantsSent.delete(outcome.site);
    const revision = judgement.kind === 'accepted' ? judgement.record.revision : 0;
    this.#deps.events.emit('mesh:record-accepted', {
      site: outcome.site,
      revision,
      full: outcome.full,
      modelsChanged: outcome.modelsChanged,
    });
    this.#keeper?.changed();
    this.#checkFreshness();
    return 'accept';
  }

  /** The acceptance function; one that throws is a malformed message, never a lost state. */
  #judge(data: Uint8Array): Judgement {
    const c = this.#config;
    try {
      return this.#deps.codec.judge(data, {
        pins: this.#trust.pins,
        pinnedUrls: this.#trust.pinnedUrls,
        highestRevision: (site) => this.#store.highestRevision(site),
        knownModels: (site, digest) => this.#store.knownModels(site, digest),
        nowWallMs: this.#deps.clock.now(),
        maxClockSkewMs: c.maxClockSkewMs,
        freshnessMs: c.freshnessMs,
        maxModels: c.maxModelsPerSite,
        maxBytes: c.maxMessageBytes,
      });
    } catch (error) {
      return {
        kind: 'rejected',
        reason: 'malformed',
        site: undefined,
        detail: `judging failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  /** Asks `site` for its full record, at most once per heartbeat per site. */
  #want(site: string): void {
    const now = this.#deps.clock.monotonicMs();
    const history = this.#wantsSent.get(site);
    if (!mayWant(history, now, this.#config.heartbeatMs)) return;
    this.#wantsSent.set(site, { lastSentAt: now, streak: (history?.streak ?? 0) + 1 });
    this.#sending = this.#sending.then(() =>
      this.#deps.transport.publish(encodeWant(site)).then(
        () => this.#deps.events.emit('mesh:want-sent', { site }),
        () => undefined,
      ),
    );
  }

  /** Reports freshness transitions, and wakes up again when the next fresh site would turn stale. */
  #checkFreshness(): void {
    if (!this.#running) return;
    const now = this.#deps.clock.monotonicMs();
    const accepted = this.#store.acceptedTimes();
    const fresh = new Map([...accepted].map(([site, at]) => [site, isFresh(at, now, this.#config.freshnessMs)]));
    for (const change of freshnessChanges(this.#reported, fresh)) {
      this.#reported.set(change.site, change.fresh);
      this.#deps.events.emit('mesh:site-freshness', change);
    }
    this.#freshnessTimer?.cancel();
    const due = nextExpiry(accepted.values(), now, this.#config.freshnessMs);
    if (due !== undefined) this.#freshnessTimer = this.#deps.clock.setTimeout(() => this.#checkFreshness(), due - now);
  }
}
