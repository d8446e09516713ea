// Transition-only logs: exactly one line per state change of a node's health or model listing,
// plus warnings for upstream failures. Nothing is logged for a state that merely repeats.

import type { Logger } from 'pino';
import type { EventBus } from '#src/core/events.ts';
import { changedDrops, configuredModelWarnings, describeTransition, sampleIds } from '#src/discovery/index.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

export interface TransitionLogSources {
  readonly logger: Logger;
  readonly registryEvents: EventBus<RegistryEvents>;
  readonly proxyEvents: EventBus<ProxyEvents>;
  /** Configured model ids that should be on this node (by group). */
  readonly expectedModels: (nodeName: string) => readonly string[];
}

/** Attempt results that are no upstream failure: the bus does not call the warning's listener for them. */
const NOT_WARNED: ReadonlySet<ProxyEvents['proxy:attempt']['result']> = new Set(['success', 'client_abort']);

export function subscribeTransitionLogs(s: TransitionLogSources): () => void {
  const { logger } = s;
  const offs = [
    ...subscribeModelEventLogs(logger, s.registryEvents),
    s.registryEvents.on('node:health-changed', ({ node, from, to }) => {
      const fields = { node, from: from.status, to: to.status, fails: to.fails, error: to.lastError };
      if (to.status === 'healthy') logger.info(fields, from.status === 'unknown' ? 'node healthy' : 'node recovered');
      else logger.warn(fields, `node ${to.status}`);
    }),
    s.registryEvents.on('node:discovery', ({ node, from, to }) => {
      const transition = describeTransition(from, to);
      if (transition !== undefined) {
        // Counts and a short sample: a node flipping between two long listings must not log them whole.
        const { message, level, added, removed, ...rest } = transition;
        const fields = { node, state: to.phase, total: to.models.length, ...idChanges(added, removed), ...rest };
        if (level === 'warn') logger.warn(fields, message);
        else logger.info(fields, message);
      }
      for (const { limit, count, sample } of changedDrops(from.dropped, to.dropped)) {
        logger.warn({ node, limit, dropped: count, sample }, 'model listing limited: entries ignored');
      }
      for (const model of configuredModelWarnings(from.models, to.models, s.expectedModels(node))) {
        if (to.phase === 'known') logger.warn({ node, model }, 'configured model not served by node');
      }
    }),
    s.registryEvents.on('node:ejected', ({ node, untilMs }) =>
      logger.warn({ node, until: new Date(untilMs).toISOString() }, 'node ejected after repeated request failures'),
    ),
    s.registryEvents.on('node:wake', ({ node, result, reason, error }) => {
      if (result === 'in_window') return;
      if (result === 'sent') logger.info({ node, reason }, 'wake sent');
      else logger.warn({ node, result, reason, error }, 'wake not sent');
    }),
    s.registryEvents.on('node:readmitted', ({ node }) => logger.info({ node }, 'node readmitted after ejection')),
    s.registryEvents.on('node:added', ({ node }) => logger.info({ node }, 'node added')),
    s.registryEvents.on('node:removed', ({ node, inFlight }) => logger.info({ node, inFlight }, 'node removed')),
    s.proxyEvents.onUnless('proxy:attempt', 'result', NOT_WARNED, (e) =>
      logger.warn(
        { node: e.node, model: e.model, result: e.result, status: e.status, error: e.error },
        'upstream attempt failed',
      ),
    ),
  ];
  return () => {
    for (const off of offs) off();
  };
}

/** Pure: how many ids a listing change added and removed, each with a short sample of them. */
export function idChanges(added: readonly string[] | undefined, removed: readonly string[] | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (added !== undefined) Object.assign(fields, { added: sampleIds(added), addedCount: added.length });
  if (removed !== undefined) Object.assign(fields, { removed: sampleIds(removed), removedCount: removed.length });
  return fields;
}

/**
 * A router's model event stream (issue 41): one line when it opens after a stop, one when it stops
 * for a reason other than the last one logged (a reconnect loop for one reason logs once), one for
 * the first unreadable frame of each open stream, and one warning per model whose child failed.
 */
function subscribeModelEventLogs(logger: Logger, events: EventBus<RegistryEvents>): (() => void)[] {
  /** Per node: the reason last logged (undefined = open), and whether this open stream has logged a bad frame. */
  const logged = new Map<string, { stopped: string | undefined; badFrame: boolean }>();
  return [
    events.on('node:model-events', ({ node, open, stop, badFrame }) => {
      const last = logged.get(node);
      if (badFrame !== undefined) {
        if (last?.badFrame !== true) logger.warn({ node, error: badFrame }, 'model event stream sent a frame it cannot read');
        logged.set(node, { stopped: undefined, badFrame: true });
        return;
      }
      if (open) {
        if (last === undefined || last.stopped !== undefined) logger.info({ node }, 'model event stream open');
        logged.set(node, { stopped: undefined, badFrame: false });
        return;
      }
      if (stop === undefined || last?.stopped === stop.reason) return;
      const fields = { node, reason: stop.reason, detail: stop.detail, retryInMs: stop.retryInMs };
      if (stop.reason === 'unsupported') logger.info(fields, 'model event stream not served: listing poll only');
      else logger.warn(fields, 'model event stream stopped');
      logged.set(node, { stopped: stop.reason, badFrame: false });
    }),
    events.on('node:removed', ({ node }) => logged.delete(node)),
    events.on('node:model-event', ({ node, event, applied }) => {
      if (applied === 'models' && event.kind === 'status' && event.status === 'failed')
        logger.warn({ node, model: event.model, exitCode: event.exitCode }, 'model instance failed on the router');
    }),
  ];
}
