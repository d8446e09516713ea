// Local nodes as targets. Each one is an admission by the scheduler (it routes, claims the lease,
// maybe queues or wakes); the scheduler's refusal ends the local targets and is kept for the answer.
// A node's outcome settles its load ticket, feeds passive health (`proxy:attempt`), teaches its
// context and the prompt's bounds (a refusal), or its bytes per token and its speed (an answer), and
// a node that lost the model its listing showed is re-listed.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RouteNote, RoutingSpan } from '#src/core/tracing.ts';
import { answersMedia, TRAITS_BY_PATH, nodePathPrefix } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { AdmissionPort, FleetReports } from '#src/ports/index.ts';
import { mayTruncateAt, tenantOf, type RouteRequest, type RouteSummary } from '#src/routing/index.ts';
import type { Admission } from '#src/scheduler/index.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import { alsoTried, judgeNodeAttempt, knownRate, speedLesson, type FailoverState } from './attempt-feedback.ts';
import type { NextTarget, RequestAsk, TargetSource } from './failover-loop.ts';
import { upstreamRequestHeaders } from '../http/hop-headers.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { loadOutcomeOf } from './load-outcome.ts';
import { judgeOverflowRefusal, overflowFacts } from '../request/overflow-refusal.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { learnFromAnswer, requestedChoices } from '../request/prompt-size.ts';
import { UsageAsk } from '../request/usage-ask.ts';
import type { AttemptVerdict, Prepared, Target, TargetCall, TargetId } from './target.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import { firstTokenDeadline } from '../attempt/first-token-deadline.ts';

export interface NodeTargetDeps {
  /** The fleet-reports port: what answers teach goes to the registry's owner. */
  readonly reports: FleetReports;
  readonly pools: UpstreamPools;
  /** The admission port: the Scheduler in-thread, a round trip to it from a worker. */
  readonly admission: AdmissionPort;
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
  /** Reads the time a node's learned speed is judged at. */
  readonly clock: Pick<Clock, 'now'>;
}

export type LocalRefusal = Extract<Admission, { kind: 'refused' }>;

/** The local targets of one request, in the order the scheduler admits them. */
export class NodeTargets implements TargetSource {
  readonly #deps: NodeTargetDeps;
  readonly #ask: RequestAsk;
  readonly #usageAsk: UsageAsk | undefined;
  #refusal: LocalRefusal | undefined;

  constructor(deps: NodeTargetDeps, ask: RequestAsk) {
    this.#deps = deps;
    this.#ask = ask;
    this.#usageAsk = ask.resolved.stream ? new UsageAsk(ask.endpoint, ask.resolved) : undefined;
  }

  /** Why the scheduler admitted no (further) node; undefined until it refused. */
  get refusal(): LocalRefusal | undefined {
    return this.#refusal;
  }

  /** At once when the scheduler admits at once (no promise); a promise when the request waits. */
  next(state: FailoverState): NextTarget | Promise<NextTarget> {
    const { routeRequest } = state;
    const routing = this.#ask.observer?.routing();
    const admitting = this.#deps.admission.admit(
      routeRequest,
      this.#ask.settings,
      this.#ask.signal,
      routeRequest.triedNodes.size === 0,
    );
    return admitting instanceof Promise
      ? admitting.then((admission) => this.#admitted(admission, routeRequest, routing))
      : this.#admitted(admitting, routeRequest, routing);
  }

  #admitted(admission: Admission, routeRequest: RouteRequest, routing: RoutingSpan | undefined): NextTarget {
    routing?.end(routeNote(admission));
    if (admission.waitedMs > 0) {
      this.#ask.onQueueWait?.(admission.waitedMs);
      this.#deps.events.emit('proxy:queue-wait', {
        model: this.#deps.modelLabel(this.#ask.resolved.model),
        waitedMs: admission.waitedMs,
        admitted: admission.kind === 'admitted',
        tenant: routeRequest.tenant?.name,
      });
    }
    if (admission.kind === 'refused') {
      this.#refusal = admission;
      // A client that left is never forwarded anywhere.
      return { kind: 'none', stop: admission.reason === 'aborted' };
    }
    return { kind: 'target', target: nodeTarget(this.#deps, this.#ask, admission, routeRequest, this.#usageAsk) };
  }
}

type Admitted = Extract<Admission, { kind: 'admitted' }>;

const MAX_NAMED_EXCLUSIONS = 8;

/** The scheduler's decision as the routing span records it: the node and why, or why none. */
function routeNote(admission: Admission): RouteNote {
  if (admission.kind === 'admitted') {
    return {
      among: 'node',
      chosen: admission.node.spec.name,
      policy: admission.route.policy,
      reason: admission.route.reason,
      waitedMs: admission.waitedMs,
    };
  }
  // Every exclusion carries its reason: the first few are named, the rest counted.
  const named = admission.excluded.slice(0, MAX_NAMED_EXCLUSIONS).map((e) => `${e.node}: ${e.code}`);
  const more = admission.excluded.length - named.length;
  const excluded = named.length === 0 ? '' : `; excluded ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  return {
    among: 'node',
    chosen: undefined,
    policy: undefined,
    reason: `refused: ${admission.reason}${excluded}`,
    waitedMs: admission.waitedMs,
  };
}

/**
 * One admitted node; `routeRequest` is the request as it was admitted (tried nodes, bounds). A
 * node whose kind streams no usage unasked is sent `usageAsk`'s body (request/usage-ask.ts).
 */
export function nodeTarget(
  deps: NodeTargetDeps,
  ask: RequestAsk,
  admission: Admitted,
  routeRequest: RouteRequest,
  usageAsk?: UsageAsk,
): Target {
  return new NodeTarget(deps, ask, admission, routeRequest, usageAsk);
}

/** One object per attempt, its methods shared (no closure per method and attempt). */
class NodeTarget implements Target {
  readonly id: TargetId;
  readonly label: string;
  readonly url: string;
  readonly route: RouteSummary;
  readonly #deps: NodeTargetDeps;
  readonly #ask: RequestAsk;
  readonly #admission: Admitted;
  readonly #routeRequest: RouteRequest;
  readonly #usageAsk: UsageAsk | undefined;

  constructor(
    deps: NodeTargetDeps,
    ask: RequestAsk,
    admission: Admitted,
    routeRequest: RouteRequest,
    usageAsk: UsageAsk | undefined,
  ) {
    const node = admission.node.spec;
    this.id = { kind: 'node', name: node.name };
    this.label = node.name;
    this.url = node.url;
    this.route = admission.route;
    this.#deps = deps;
    this.#ask = ask;
    this.#admission = admission;
    this.#routeRequest = routeRequest;
    this.#usageAsk = usageAsk;
  }

  prepare(): Prepared {
    const ask = this.#ask;
    const admission = this.#admission;
    const view = admission.node;
    const node = view.spec;
    const { resolved, endpoint } = ask;
    const asked = this.#usageAsk?.forNode(view);
    const headers = upstreamRequestHeaders({
      client: ask.req.headers,
      apiKey: node.apiKey,
      bodyBytes: (asked?.body ?? resolved.body).length,
      requestId: ask.requestId,
      clientAddress: ask.req.socket.remoteAddress,
    });
    const extraResponseHeaders: Record<string, string> = {
      'x-switchyard-node': node.name,
      'x-switchyard-route': `${admission.route.policy}; ${admission.route.reason}`,
      'x-request-id': ask.requestId,
    };
    const warning = truncationWarning(this.#routeRequest, view);
    if (warning !== undefined) extraResponseHeaders['x-switchyard-context'] = warning;
    const pool = this.#deps.pools.dispatchTo(node);
    // Every member named, none spread: one literal of one shape per attempt.
    const call: TargetCall = {
      pool: pool.dispatcher,
      origin: pool.origin,
      path: (view.facts?.pathPrefix ?? nodePathPrefix(node.url)) + endpoint,
      headers,
      extraResponseHeaders,
      passOnErrors: true,
      headersTimeoutMs: admission.load?.timeoutMs,
      errorDialect: errorDialectFor(endpoint),
      anyMedia: TRAITS_BY_PATH[endpoint]?.answersMedia ?? answersMedia(endpoint),
      speed: {
        rate: knownRate(view, resolved.model, this.#deps.clock.now()),
        choices: requestedChoices(endpoint, resolved.json),
      },
      body: asked?.body,
      usageAsked: asked?.usageAsked,
      learnAnswerId: this.#answerIdLearner(),
      // Only a streamed answer has a first token to wait for: a whole one is not judged for a deadline.
      firstToken: streamsAnswer(endpoint, resolved)
        ? firstTokenDeadline({
            streams: true,
            configuredMs: ask.settings.firstTokenTimeoutMs,
            nodeMs: node.firstTokenTimeoutMs,
            loadsModel: admission.load !== undefined,
          })
        : undefined,
    };
    return { kind: 'send', call };
  }

  /**
   * A streamed chat completion or Responses answer: its id, read from the first event as it passes,
   * is remembered → this node for the tenant (a control or a GET of it while it generates comes
   * here). undefined for any other request, or where nothing learns answers' nodes.
   */
  #answerIdLearner(): ((id: string) => void) | undefined {
    const learn = this.#deps.reports.learnAnswerNode;
    const { endpoint, resolved } = this.#ask;
    if (learn === undefined || !resolved.stream || !LEARNS_ANSWER_ID.has(endpoint)) return undefined;
    const tenant = tenantOf(this.#routeRequest);
    const node = this.label;
    return (id) => learn(tenant, id, node);
  }

  /** Asked only on a 5xx: the tried-nodes copy is made then, not per attempt. */
  canFailOver(): boolean {
    return this.#deps.admission.hasAlternative(alsoTried(this.#routeRequest, this.label));
  }

  release(): void {
    this.#admission.release();
  }

  conclude(outcome: AttemptOutcome): AttemptVerdict {
    const deps = this.#deps;
    const { resolved, endpoint } = this.#ask;
    const view = this.#admission.node;
    const node = view.spec;
    const routeRequest = this.#routeRequest;
    this.#admission.load?.settle(loadOutcomeOf(outcome));
    // The overflow judgement is asked only of a refusal: no closure for an answer.
    const feedback = judgeNodeAttempt(
      node.name,
      outcome,
      outcome.kind === 'refused'
        ? (meaning) => judgeOverflowRefusal(overflowFacts(view, routeRequest, { endpoint, json: resolved.json }, meaning))
        : notARefusal,
    );
    const { event } = feedback;
    deps.events.emit('proxy:attempt', {
      node: node.name,
      model: deps.modelLabel(resolved.model),
      result: event.result,
      status: event.status,
      error: event.error,
    });
    // The node's context is remembered for it alone (overflow-refusal.ts).
    if (feedback.learnCtx !== undefined) deps.reports.learnContext(node.name, node.url, resolved.model, feedback.learnCtx);
    if (feedback.modelVanished) deps.reports.modelVanished(node.name);
    if (feedback.lacksEndpoint !== undefined)
      deps.reports.learnLackingEndpoint(node.name, node.url, endpoint, feedback.lacksEndpoint);
    if (outcome.kind === 'delivered' && outcome.status === 200 && outcome.usage?.counted === 'usage') {
      learnFromAnswer(deps.reports, view, { endpoint, model: resolved.model, json: resolved.json }, outcome.usage.promptTokens);
      // A Responses answer's id: a later previous_response_id naming it comes back to this node.
      const answerId = outcome.usage.answerId;
      if (answerId !== undefined) deps.reports.learnAnswerNode?.(tenantOf(routeRequest), answerId, node.name);
    }
    const lesson = speedLesson(outcome, requestedChoices(endpoint, resolved.json));
    if (lesson !== undefined) deps.reports.learnDecodeRate(node.name, node.url, resolved.model, lesson);
    return feedback.verdict;
  }
}

/** The endpoints whose streamed answers are read for their id (first-answer-id.ts). */
const LEARNS_ANSWER_ID: ReadonlySet<string> = new Set(['/v1/chat/completions', '/v1/responses']);

/** Whether the request asks for a streamed answer: `"stream": true`, or an Ollama chat or generate without `"stream": false`. */
function streamsAnswer(endpoint: string, resolved: RequestAsk['resolved']): boolean {
  if (resolved.stream) return true;
  // Ollama's native generating routes stream unless asked not to.
  return (endpoint === '/api/chat' || endpoint === '/api/generate') && resolved.json['stream'] !== false;
}

/** The overflow judgement of an outcome that is no refusal: never asked. */
function notARefusal(): never {
  throw new Error('only a refusal is judged for overflow');
}

/** `x-switchyard-context`'s value when the node may have cut the prompt silently (docs/config.md, "Prompt size"). */
function truncationWarning(request: RouteRequest, node: NodeView): string | undefined {
  const ctx = node.facts?.truncates === false ? undefined : mayTruncateAt(request, node);
  return ctx === undefined
    ? undefined
    : `may-truncate; prompt ${request.minPromptTokens ?? request.promptTokens}-${request.promptTokens} tokens; context ${ctx}`;
}
