// Loaded means loaded, and a prompt goes where it fits. Nodes that have the model loaded and a
// context large enough come first; only when none exists do nodes that would load it on demand
// (router entries not loaded, installed Ollama models) take part, judged by their last known context.
// An unknown context (0) counts as fitting: the node's own answer will tell.

import { ctxFor, lastKnownCtx, residencyOf } from '#src/capacity/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { Exclusion } from '../exclusion.ts';
import type { Filter } from '../filter.ts';
import { neededTokens } from '../route-request.ts';

const NAME = 'fits-context';

export const fitsContext: Filter = {
  name: NAME,
  apply(req, candidates) {
    const need = neededTokens(req);
    const loadedFit: NodeView[] = [];
    const onDemandFit: NodeView[] = [];
    const refused: Exclusion[] = [];
    const notLoaded: { node: NodeView; status: string }[] = [];
    for (const node of candidates) {
      const residency = residencyOf(node, req.model);
      if (residency.state === 'absent') {
        refused.push({ node: node.spec.name, filter: NAME, code: 'missing', detail: 'not in the model list' });
        continue;
      }
      const ctx = residency.state === 'loaded' ? ctxFor(node, req.model) : lastKnownCtx(node, req.model);
      if (ctx > 0 && ctx < need) {
        refused.push({ node: node.spec.name, filter: NAME, code: 'too_small', detail: `needs ${need} tokens, context is ${ctx}` });
      } else if (residency.state === 'loaded') {
        loadedFit.push(node);
      } else {
        onDemandFit.push(node);
        notLoaded.push({ node, status: residency.status });
      }
    }
    const standBy = (detail: (status: string) => string): Exclusion[] =>
      notLoaded.map(({ node, status }) => ({ node: node.spec.name, filter: NAME, code: 'not_loaded', detail: detail(status) }));
    if (loadedFit.length > 0) {
      return { kept: loadedFit, excluded: [...refused, ...standBy((s) => `${s}; a node has it loaded`)] };
    }
    if (!req.loadOnDemand) {
      return { kept: [], excluded: [...refused, ...standBy((s) => `${s}; routing.load_on_demand is off`)] };
    }
    return { kept: onDemandFit, excluded: refused };
  },
};
