// How a request no target served is answered — the one refusal renderer, for nodes and sites
// alike: the admission's refusal (queue full or timed out, a wake that timed out, a prompt too
// large) or, after attempts, what the targets said (context overflow, unknown model, a load that
// timed out, every target failed, each in the one failures list), or — for a first attempt nothing
// could take — 404 for a model no current listing has (nor any remote site), 503 otherwise, with
// the node exclusions counted and the site exclusions listed beside them.

import type { EventBus } from '#src/core/events.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { largestContext, type SiteExclusion } from '#src/routing/index.ts';
import type { Admission } from '#src/scheduler/index.ts';
import type { FailoverState } from './failover-state.ts';
import type { ProxyEvents } from './proxy-events.ts';
import { refusalFigure } from './prompt-bounds.ts';
import {
  allAttemptsFailed,
  contextLengthExceeded,
  modelLoadTimedOut,
  nothingServes,
  queueRefused,
  upstreamModelNotFound,
  wakeTimedOut,
} from './refusal-errors.ts';
import type { Finish } from './request-report.ts';
import type { ResolvedRequest } from './request-model.ts';
import type { RequestSettings } from './request-settings.ts';
import { failureLine } from './target.ts';

export interface RefusalDeps {
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
  readonly snapshot: () => RoutingSnapshot;
}

/** What the remote sites said about a request no local node served ([mesh] only). */
export interface SiteVerdicts {
  /** Why each pinned site did not serve it: listed next to the nodes in 503 bodies. */
  readonly excluded: readonly SiteExclusion[];
  /** Models remote sites list, or listed within REMEMBERED_MS: such a model is never answered 404. */
  readonly models: ReadonlySet<string>;
}

export interface RefusalContext {
  readonly settings: RequestSettings;
  readonly admission: Extract<Admission, { kind: 'refused' }>;
  readonly resolved: ResolvedRequest;
  /** What the failover loop learned: the targets tried and why each failed, the last refusal, the prompt's bounds. */
  readonly state: FailoverState;
  readonly fail: (error: GatewayError) => void;
  readonly finish: Finish;
  readonly sites?: SiteVerdicts | undefined;
}

export function respondRefused(deps: RefusalDeps, c: RefusalContext): void {
  const { admission, resolved } = c;
  const { routeRequest, lastRefusal } = c.state;
  if (admission.reason === 'aborted') {
    c.finish(undefined, 499, { clientAborted: true });
    return;
  }
  if (admission.reason === 'queue_full' || admission.reason === 'queue_timeout') {
    c.fail(queueRefused(resolved.requestedModel, admission.reason, admission.waitedMs));
    return;
  }
  if (admission.reason === 'wake_timeout') {
    c.fail(wakeTimedOut(resolved.requestedModel, admission.waitedMs, c.settings.retryAfterSeconds));
    return;
  }
  const overflowed = lastRefusal?.kind === 'context_overflow';
  if (admission.reason === 'too_large' || overflowed) {
    deps.events.emit('proxy:context-rejected', { model: deps.modelLabel(resolved.model) });
    const largest = largestContext(deps.snapshot(), resolved.model);
    const figure = refusalFigure({ lower: routeRequest.minPromptTokens ?? routeRequest.promptTokens ?? 0, upper: routeRequest.promptTokens ?? 0 });
    c.fail(
      contextLengthExceeded({
        model: resolved.requestedModel,
        promptTokens: figure.tokens,
        atLeast: figure.atLeast,
        maxTokens: routeRequest.maxTokens,
        largestContext: largest > 0 ? largest : (lastRefusal?.kind === 'context_overflow' ? (lastRefusal.nCtx ?? 0) : 0),
      }),
    );
    return;
  }
  if (lastRefusal?.kind === 'model_not_found') {
    c.fail(upstreamModelNotFound(resolved.requestedModel, lastRefusal.message));
    return;
  }
  const retryAfter = c.settings.retryAfterSeconds;
  const failures = c.state.failures.map(failureLine);
  if (c.state.loadTimedOut) {
    c.fail(modelLoadTimedOut(resolved.requestedModel, failures, retryAfter));
    return;
  }
  if (routeRequest.triedNodes.size > 0) {
    c.fail(allAttemptsFailed(resolved.requestedModel, failures, retryAfter));
    return;
  }
  const { nodes } = deps.snapshot();
  const error = nothingServes({
    nodes,
    model: resolved.model,
    requested: resolved.requestedModel,
    excluded: admission.excluded,
    retryAfterSeconds: retryAfter,
    remoteModels: c.sites?.models,
    siteExclusions: c.sites?.excluded,
  });
  deps.events.emit('proxy:unroutable', { answer: error.status === 404 ? 'model_not_found' : 'no_healthy_node' });
  c.fail(error);
}
