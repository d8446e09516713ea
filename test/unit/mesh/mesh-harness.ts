// Several MeshServices on one memory bus and one ManualClock, each with a settable model list:
// the federation's control plane without HTTP.

import { ManualClock } from '#src/core/clock.ts';
import { EventBus } from '#src/core/events.ts';
import type { MeshConfig, MeshSitePin } from '#src/mesh/config/mesh-config.ts';
import { MemoryBus, MeshService, type MeshEvents, type MemoryTransport } from '#src/mesh/index.ts';
import type { SiteRecordModel } from '#src/mesh/site-record.ts';
import { siteCodec } from '#src/mesh/site-codec.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { newSiteKey } from '#src/mesh/site-key-file.ts';
import type { RevisionStore } from '#src/mesh/revision-state-file.ts';

export const HEARTBEAT_MS = 1_000;
/** A peer every harness site admits (`allowed_peers`) though it is no pinned site: the tests' attacker. */
export const ROGUE = newSiteKey();
export const FRESHNESS_MS = 3_000;

export interface HarnessSite {
  readonly id: string;
  readonly key: SiteKey;
  readonly service: MeshService;
  readonly transport: MemoryTransport;
  readonly events: { name: keyof MeshEvents; payload: unknown }[];
  /** The site's event bus (what the gateway's logs, metrics and dashboard listen to). */
  readonly bus: EventBus<MeshEvents>;
  models: SiteRecordModel[];
  /** When false, the source answers "unknown". */
  listing: boolean;
}

export function meshConfig(site: string, pins: readonly MeshSitePin[], overrides: Partial<MeshConfig> = {}): MeshConfig {
  return {
    site,
    url: `http://127.0.0.1:1/${site}`,
    keyFile: `/unused/${site}.key`,
    listen: [],
    peers: [],
    allowedPeers: [ROGUE.peerId],
    maxPeerMessagesPerSecond: 100_000,
    heartbeatMs: HEARTBEAT_MS,
    freshnessMs: FRESHNESS_MS,
    maxModelsPerSite: 8,
    maxClockSkewMs: 30_000,
    maxRememberedForwards: 65_536,
    maxMessageBytes: 64 * 1024,
    staticModels: [],
    sites: pins,
    ...overrides,
  };
}

export class MeshHarness {
  readonly clock = new ManualClock();
  readonly bus = new MemoryBus();
  readonly keys = new Map<string, SiteKey>();
  readonly sites = new Map<string, HarnessSite>();

  constructor(ids: readonly string[]) {
    for (const id of ids) this.keys.set(id, newSiteKey());
  }

  pins(): MeshSitePin[] {
    return [...this.keys].map(([id, key]) => ({ id, publicKey: key.publicKey }));
  }

  site(id: string): HarnessSite {
    const found = this.sites.get(id);
    if (found === undefined) throw new Error(`no site ${id}`);
    return found;
  }

  async start(
    id: string,
    models: SiteRecordModel[] = [],
    overrides: Partial<MeshConfig> = {},
    extra: { readonly revisions?: RevisionStore } = {},
  ): Promise<HarnessSite> {
    const key = this.keys.get(id) ?? newSiteKey();
    const transport = this.bus.transport(`peer-${id}`, key.peerId);
    const events = new EventBus<MeshEvents>((e) => {
      throw e;
    });
    const log: HarnessSite['events'] = [];
    for (const name of [
      'mesh:record-accepted',
      'mesh:record-rejected',
      'mesh:site-freshness',
      'mesh:published',
      'mesh:models-capped',
      'mesh:want-sent',
      'mesh:publish-failed',
      'mesh:want-ignored',
      'mesh:state-failed',
    ] as const) {
      events.on(name, (payload) => log.push({ name, payload }));
    }
    const holder: { site?: HarnessSite } = {};
    const service = new MeshService({
      config: meshConfig(id, this.pins(), overrides),
      clock: this.clock,
      transport,
      codec: siteCodec(key),
      sources: [
        {
          name: 'test',
          models: () =>
            holder.site?.listing === false
              ? { kind: 'unknown', reason: 'test' }
              : { kind: 'list', models: holder.site?.models ?? [] },
        },
      ],
      load: () => ({ in_flight: 1, queued: 0, slots: 4 }),
      events,
      revisions: extra.revisions,
    });
    const site: HarnessSite = { id, key, service, transport, events: log, bus: events, models, listing: true };
    holder.site = site;
    this.sites.set(id, site);
    await service.start();
    await settle();
    return site;
  }

  /** Moves the shared clock, letting deliveries land between steps. */
  async advance(ms: number, stepMs = 100): Promise<void> {
    for (let done = 0; done < ms; done += stepMs) {
      this.clock.advance(Math.min(stepMs, ms - done));
      await settle();
    }
  }

  /** The attacker's transport (admitted by every site, pinned by none). */
  rogue(): MemoryTransport {
    return this.bus.transport('peer-rogue', ROGUE.peerId);
  }

  async stopAll(): Promise<void> {
    for (const site of this.sites.values()) await site.service.stop();
  }
}

/** Lets queued publications and deliveries (promises, microtasks) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

export function modelIds(site: HarnessSite, remote: string): string[] {
  return [
    ...(site.service
      .sites()
      .find((s) => s.id === remote)
      ?.models.keys() ?? []),
  ];
}

export function isFreshAt(site: HarnessSite, remote: string): boolean {
  return site.service.sites().find((s) => s.id === remote)?.fresh === true;
}

export function named<K extends keyof MeshEvents>(site: HarnessSite, name: K): MeshEvents[K][] {
  return site.events.filter((e) => e.name === name).map((e) => e.payload as MeshEvents[K]);
}
