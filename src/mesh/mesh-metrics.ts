// Federation metrics: counters fed by the mesh service's events, gauges read at scrape time.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { EventBus } from '#src/core/events.ts';
import type { MeshEvents } from './mesh-events.ts';
import type { MeshTransportStats } from './transport.ts';
import type { RemoteSiteView } from '#src/routing/remote/remote-site.ts';

export interface MeshMetricSources {
  readonly events: EventBus<MeshEvents>;
  /** Every pinned remote site (a bounded set: the config's pins). */
  readonly sites: () => readonly RemoteSiteView[];
  readonly transportStats: () => MeshTransportStats | undefined;
  /** The replay memory of forwarded requests ([mesh] with this gateway's own memory): entries by site, and each site's share. */
  readonly replay?: { readonly remembered: () => ReadonlyMap<string, number>; readonly share: () => number } | undefined;
}

/** Registers the mesh metrics; answers the unsubscribe. */
export function registerMeshMetrics(registry: Registry, s: MeshMetricSources): () => void {
  const accepted = new Counter({
    name: 'gateway_mesh_records_accepted_total',
    help: 'Site records accepted, by the (pinned) site that signed them.',
    labelNames: ['site'],
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'gateway_mesh_records_rejected_total',
    help: 'Gossip messages rejected, by reason (malformed, oversized, not_pinned, bad_signature, replay, future, over_cap, unknown_digest).',
    labelNames: ['reason'],
    registers: [registry],
  });
  const capped = new Counter({
    name: 'gateway_mesh_models_capped_total',
    help: 'Full records of this site that left models out to stay within [mesh] max_models_per_site.',
    registers: [registry],
  });
  const published = new Counter({
    name: 'gateway_mesh_published_total',
    help: "This site's own records published, by kind (full, digest).",
    labelNames: ['kind'],
    registers: [registry],
  });
  new Gauge({
    name: 'gateway_mesh_site_fresh',
    help: '1 while a newer record of the pinned site was accepted within [mesh] freshness, else 0 (routing skips it).',
    labelNames: ['site'],
    registers: [registry],
    collect() {
      this.reset();
      for (const site of s.sites()) this.set({ site: site.id }, site.fresh ? 1 : 0);
    },
  });
  new Gauge({
    name: 'gateway_mesh_gossip_bytes_total',
    help: 'Gossip bytes this site sent (direction="out") and received (direction="in") since start: with the libp2p transport, every gossipsub RPC (its own records, records relayed for other sites, subscriptions and IHAVE/IWANT/GRAFT/PRUNE control), protobuf size before stream framing.',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      const stats = s.transportStats();
      this.set({ direction: 'out' }, stats?.bytesSent ?? 0);
      this.set({ direction: 'in' }, stats?.bytesReceived ?? 0);
    },
  });
  const replay = s.replay;
  if (replay !== undefined) {
    new Gauge({
      name: 'gateway_mesh_replay_remembered',
      help: "Forwarded-request signatures remembered for replay checks, by the pinned site that sent them (each site's forwards are refused 429 replay_memory_full at gateway_mesh_replay_share).",
      labelNames: ['site'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [site, count] of replay.remembered()) this.set({ site }, count);
      },
    });
    new Gauge({
      name: 'gateway_mesh_replay_share',
      help: 'Signatures each pinned site may have remembered for replay checks at once: [mesh] max_remembered_forwards split over the remote sites pinned.',
      registers: [registry],
      collect() {
        this.set(replay.share());
      },
    });
  }
  const offs = [
    s.events.on('mesh:record-accepted', ({ site }) => accepted.inc({ site })),
    s.events.on('mesh:record-rejected', ({ reason }) => rejected.inc({ reason })),
    s.events.on('mesh:models-capped', () => capped.inc()),
    s.events.on('mesh:published', ({ kind }) => published.inc({ kind })),
  ];
  return () => {
    for (const off of offs) off();
  };
}
