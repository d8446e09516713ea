// Dead nodes (health failures reached the threshold) are never routed to.
import { predicateFilter } from '../filter.ts';

export const notDead = predicateFilter('not-dead', (_req, node) =>
  node.health.status === 'dead'
    ? { code: 'dead', detail: node.health.lastError ? `last probe: ${node.health.lastError}` : undefined }
    : undefined,
);
