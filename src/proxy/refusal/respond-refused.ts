// The one refusal renderer's shell: answers a request no target served as refusal-answer.ts
// decides, and counts the answers counted apart.

import type { EventBus } from '#src/core/events.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { refusalAnswer, type RefusalFacts } from './refusal-answer.ts';
import type { Finish } from '../request/request-report.ts';

export type { SiteVerdicts } from './refusal-answer.ts';

export interface RefusalDeps {
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
  readonly snapshot: () => RoutingSnapshot;
}

export interface RefusalContext extends Omit<RefusalFacts, 'snapshot'> {
  readonly fail: (error: GatewayError) => void;
  readonly finish: Finish;
}

export function respondRefused(deps: RefusalDeps, c: RefusalContext): void {
  const decided = refusalAnswer({ ...c, snapshot: deps.snapshot });
  if (decided.kind === 'client_gone') {
    c.finish(undefined, 499, { clientAborted: true });
    return;
  }
  if (decided.counted === 'context_rejected') deps.events.emit('proxy:context-rejected', { model: deps.modelLabel(c.model) });
  else if (decided.counted !== undefined) deps.events.emit('proxy:unroutable', { answer: decided.counted });
  c.fail(decided.error);
}
