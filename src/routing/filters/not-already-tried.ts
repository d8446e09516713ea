// Failover never sends a request back to a node that already failed it.
import { predicateFilter } from '../filter.ts';

export const notAlreadyTried = predicateFilter(
  'not-already-tried',
  (req, node) => (req.triedNodes.has(node.spec.name) ? { code: 'already_tried' } : undefined),
  'tried',
);
