// The cache-aware policy's estimated prefix hits, as counters read at scrape time: the share of
// prompt characters routed to a node whose prefix cache (by the gateway's estimate) held them.

import { Gauge, type Registry } from 'prom-client';
import type { PrefixHitFigures } from '#src/routing/index.ts';

export function registerPrefixHits(registry: Registry, hits: () => PrefixHitFigures): void {
  new Gauge({
    name: 'gateway_cache_aware_prefix_hit_ratio',
    help: 'cache-aware: estimated share of prompt characters sent to a node that held them already (0 before any).',
    registers: [registry],
    collect() {
      const { matchedChars, promptChars } = hits();
      this.set(promptChars === 0 ? 0 : matchedChars / promptChars);
    },
  });
  new Gauge({
    name: 'gateway_cache_aware_prompt_chars',
    help: 'cache-aware: prompt characters routed since start, all and estimated to be held already (kind="matched").',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const { matchedChars, promptChars } = hits();
      this.set({ kind: 'all' }, promptChars);
      this.set({ kind: 'matched' }, matchedChars);
    },
  });
}
