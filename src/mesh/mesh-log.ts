// Federation transition logs: a site turning fresh or stale (once per transition), a rejection
// once per (peer, reason) at a bounded rate per reason (src/mesh/rejection-log.ts, with the count
// held back) — a warning for a trust failure, an info line for a harmless ordering rejection
// (rejection-class.ts) —, the cap once per over-cap episode, and this site's own failures.

import type { Logger } from 'pino';
import type { EventBus } from '#src/core/events.ts';
import type { MeshEvents } from './mesh-events.ts';
import { rejectionClass } from './rejection-class.ts';

export function subscribeMeshLogs(logger: Logger, events: EventBus<MeshEvents>): () => void {
  const offs = [
    events.on('mesh:site-freshness', ({ site, fresh }) => {
      if (fresh) logger.info({ site }, 'mesh site fresh');
      else logger.warn({ site }, 'mesh site stale: its models are not routed to until a newer record arrives');
    }),
    events.on('mesh:record-rejected', ({ reason, site, peer, detail, log, suppressed, knownAuthor }) => {
      if (!log) return;
      const kind = rejectionClass(reason);
      const fields = {
        reason,
        class: kind,
        site,
        peer,
        detail,
        known_author: knownAuthor,
        ...(suppressed > 0 ? { suppressed } : {}),
      };
      if (kind === 'trust') logger.warn(fields, 'mesh record rejected (logged once per peer and reason)');
      else logger.info(fields, 'mesh record rejected (logged once per peer and reason)');
    }),
    events.on('mesh:state-failed', ({ problem }) => logger.error({ problem }, 'mesh state file not used')),
    events.on('mesh:models-capped', ({ total, cap, firstInEpisode }) => {
      if (firstInEpisode)
        logger.warn({ total, cap }, 'this site serves more models than [mesh] max_models_per_site: publishing the first by id');
    }),
    events.on('mesh:publish-failed', ({ kind, error }) => logger.error({ kind, error }, 'mesh record not published')),
    events.on('mesh:published', ({ kind, why, revision, models }) => {
      if (kind === 'full') logger.debug({ why, revision, models }, 'mesh full record published');
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
