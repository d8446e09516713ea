// Degraded nodes, and nodes passive health has ejected, stand by: they are used only when no
// healthy (or not yet probed) node remains. An ejection counts until its deadline, compared with
// the snapshot's `now`.
import { isEjected, type NodeView } from '#src/nodes/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';

export const preferHealthy: Filter = {
  name: 'prefer-healthy',
  apply(_req, candidates, snapshot) {
    const ejected = (n: NodeView): boolean => isEjected(n, snapshot.now);
    const standsBy = (n: NodeView): boolean => n.health.status === 'degraded' || ejected(n);
    const fine = candidates.filter((n) => !standsBy(n));
    if (fine.length === 0) return { kept: candidates, excluded: [] };
    const excluded: Exclusion[] = candidates.filter(standsBy).map((n) =>
      ejected(n)
        ? {
            node: n.spec.name,
            filter: 'prefer-healthy',
            code: 'ejected',
            detail: 'recent requests failed; a healthy node can serve',
          }
        : { node: n.spec.name, filter: 'prefer-healthy', code: 'degraded', detail: 'a healthy node can serve' },
    );
    return { kept: fine, excluded };
  },
};
