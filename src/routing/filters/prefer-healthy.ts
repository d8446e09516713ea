// Degraded nodes stand by: they are used only when no healthy (or not yet probed) node remains.
import type { NodeView } from '#src/nodes/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';

export const preferHealthy: Filter = {
  name: 'prefer-healthy',
  apply(_req, candidates) {
    const fine = candidates.filter((n) => n.health.status !== 'degraded');
    if (fine.length === 0) return { kept: candidates, excluded: [] };
    const excluded: Exclusion[] = candidates
      .filter((n: NodeView) => n.health.status === 'degraded')
      .map((n) => ({ node: n.spec.name, filter: 'prefer-healthy', code: 'degraded', detail: 'a healthy node can serve' }));
    return { kept: fine, excluded };
  },
};
