// What the scheduler tells the outside world, turned into proxy events (metrics count exclusions
// and model switches) and a log line for a failed refresh-on-miss.

import type { Logger } from 'pino';
import type { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';
import type { SchedulerNotice } from '#src/scheduler/index.ts';

export interface NoticeSinks {
  readonly events: EventBus<ProxyEvents>;
  /** The bounded metrics label of a requested model. */
  readonly label: (model: string) => string;
  readonly logger: Logger;
}

export function publishNotice(sinks: NoticeSinks, notice: SchedulerNotice): void {
  if (notice.kind === 'decided') {
    // A decision that excluded no node has nothing to count: no event, no label (the scheduler does not send one).
    if (notice.decision.excluded.length > 0)
      sinks.events.emit('route:excluded', { model: sinks.label(notice.req.model), excluded: notice.decision.excluded });
  } else if (notice.kind === 'switch') {
    sinks.events.emit('route:model-switch', { node: notice.node, model: sinks.label(notice.model) });
  } else {
    sinks.logger.error({ err: notice.error }, 'refresh-on-miss failed');
  }
}
