// How a request that was not served is answered: the admission's refusal (queue full or timed out,
// a wake that timed out, a prompt too large) or, after attempts, what the nodes said (context
// overflow, unknown model, a load that timed out, every node failed), or — for a first attempt
// nothing could take — 404 for a model no current listing has, 503 otherwise.

import type { EventBus } from '#src/core/events.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { RoutingSnapshot } from '#src/nodes/index.ts';
import { largestContext, type RouteRequest, type SiteExclusion } from '#src/routing/index.ts';
import type { Admission } from '#src/scheduler/index.ts';
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
import type { UpstreamErrorMeaning } from './upstream-error.ts';

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
  readonly routeRequest: RouteRequest;
  readonly resolved: ResolvedRequest;
  readonly failures: readonly string[];
  readonly lastRefusal: UpstreamErrorMeaning | undefined;
  /** The last attempt was a load that timed out (routing.load_timeout). */
  readonly loadTimedOut: boolean;
  readonly fail: (error: GatewayError) => void;
  readonly finish: Finish;
  readonly sites?: SiteVerdicts | undefined;
}

export function respondRefused(deps: RefusalDeps, c: RefusalContext): void {
  const { admission, routeRequest, resolved } = c;
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
  const overflowed = c.lastRefusal?.kind === 'context_overflow';
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
        largestContext: largest > 0 ? largest : (c.lastRefusal?.kind === 'context_overflow' ? (c.lastRefusal.nCtx ?? 0) : 0),
      }),
    );
    return;
  }
  if (c.lastRefusal?.kind === 'model_not_found') {
    c.fail(upstreamModelNotFound(resolved.requestedModel, c.lastRefusal.message));
    return;
  }
  const retryAfter = c.settings.retryAfterSeconds;
  if (c.loadTimedOut) {
    c.fail(modelLoadTimedOut(resolved.requestedModel, c.failures, retryAfter));
    return;
  }
  if (routeRequest.triedNodes.size > 0) {
    c.fail(allAttemptsFailed(resolved.requestedModel, c.failures, retryAfter));
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
