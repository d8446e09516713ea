// Federation's request-path logs, transitions only: a remote site that stops answering forwards
// (and backs off) or answers again, and the first refusal of each kind of forwarded request from
// each site — a peer misconfigured or an attacker repeating itself costs one line, not one per request.

import type { Logger } from 'pino';
import type { ForwardEvents } from './forward-events.ts';

export function subscribeForwardLogs(logger: Logger, events: ForwardEvents): (() => void)[] {
  // Bounded: sites are pinned ids or `_unknown`, results a closed set.
  const refusalsLogged = new Set<string>();
  return [
    events.reachability(({ site, reachable, detail }) => {
      if (reachable) logger.info({ site }, 'remote site answering forwards again');
      else logger.warn({ site, error: detail }, 'remote site unreachable; forwards skip it while it backs off');
    }),
    events.forwardedIn(({ site, result }) => {
      if (result === 'accepted') return;
      const key = `${site}\u0000${result}`;
      if (refusalsLogged.has(key)) return;
      refusalsLogged.add(key);
      logger.warn({ site, reason: result }, 'forwarded request refused (logged once per site and reason)');
    }),
  ];
}
