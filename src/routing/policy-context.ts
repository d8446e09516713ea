// What the selection policies draw on, read from the config in force at each decision.

import type { GatewayConfig } from '#src/config/index.ts';
import type { PolicyContext } from './policies/selection-policy.ts';
import { SessionTable } from './policies/session-table.ts';

export function policyContextFor(config: () => GatewayConfig, random: () => number): PolicyContext {
  return {
    random,
    loadStaleAfterMs: () => config().load.staleAfterMs,
    affinityEpsilon: () => config().routing.affinityEpsilon,
    sessions: new SessionTable(),
    sessionTtlMs: () => config().routing.sessionTtlMs,
    cacheAware: () => {
      const r = config().routing;
      return {
        threshold: r.cacheThreshold,
        balanceAbs: r.cacheBalanceAbs,
        balanceRel: r.cacheBalanceRel,
        maxTreeChars: r.cacheMaxTreeChars,
        maxPromptChars: r.cachePromptChars,
      };
    },
  };
}
