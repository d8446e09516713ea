// Dead nodes (health failures reached the threshold) are never routed to; nor are asleep ones
// until they are woken and answer again.
import { predicateFilter } from '../filter.ts';

export const notDead = predicateFilter(
  'not-dead',
  (_req, node) => {
    const status = node.health.status;
    if (status !== 'dead' && status !== 'asleep') return undefined;
    return { code: status, detail: node.health.lastError ? `last probe: ${node.health.lastError}` : undefined };
  },
  'model',
);
