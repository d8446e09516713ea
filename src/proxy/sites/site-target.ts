// Remote sites as targets ([mesh]): tried after the local nodes, each chosen by routing/remote's
// chooseSite (pure) among the fresh sites that list the model and fit it, within the request's
// tenant's site scope, none tried twice. A site's request is signed as this site once per attempt
// (mesh/forwarding), states the request's tenant and class in a signed header, carries no client
// credential, and none of its error answers reaches the client. Its outcome feeds its
// reachability back-off and `mesh:forwarded`.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RouteNote } from '#src/core/tracing.ts';
import type { TenantSpec } from '#src/config/index.ts';
import { answersMedia } from '#src/config/index.ts';
import { signForward, siteTargetUrl, TENANT_HEADER, type MeshLink } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import {
  chooseSite,
  knownRemoteModels,
  type RemoteSiteView,
  type SiteChoice,
  type SiteReachability,
} from '#src/routing/index.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import { judgeSiteAttempt } from '../failover/attempt-feedback.ts';
import type { NextTarget, RequestAsk, TargetSource } from '../failover/failover-loop.ts';
import { siteExclusionsAfter, type FailoverState } from '../failover/failover-state.ts';
import type { HeldBytesBudget } from '../attempt/held-budget.ts';
import { upstreamRequestHeaders } from '../http/hop-headers.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { promptText, typicalTokens } from '../request/prompt-size.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import type { SiteVerdicts } from '../refusal/refusal-answer.ts';
import { siteLabel, type AttemptVerdict, type Prepared, type Target } from '../failover/target.ts';
import type { UpstreamPools } from '../attempt/upstream-pools.ts';
import { UsageAsk } from '../request/usage-ask.ts';

export interface RemoteDeps {
  readonly mesh: MeshLink;
  /** One bounded pool per site, keyed by site id and url. */
  readonly pools: UpstreamPools;
  readonly reachability: SiteReachability;
  /** The round-robin turn for ties between equally loaded sites (counts up per call). */
  readonly nextTurn: () => number;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly heldBudget: HeldBytesBudget;
}

/** Client credentials and federation headers a site never passes on (the receiver authenticates the signature). */
const NOT_FORWARDED_TO_SITES: readonly string[] = [
  'cookie',
  'api-key',
  'x-goog-api-key',
  'openai-organization',
  'openai-project',
  'signature',
  'signature-input',
  'content-digest',
  // A client's own copy never passes: the forward states the request's tenant itself, signed.
  TENANT_HEADER,
];

/** What forwarding reads of the request's tenant: its name and class (signed into the forward) and its site scope. */
export type ForwardingTenant = Pick<TenantSpec, 'name' | 'priority' | 'sites'>;

export interface SiteAsk extends RequestAsk {
  /** The request was itself forwarded here: it never leaves (every site is excluded as `forwarded`). */
  readonly forwarded: boolean;
  readonly maxTokens: number | undefined;
  /** A tokenizer counted the prompt: its count judges sites as it judges nodes. */
  readonly exactCount: boolean;
  /**
   * The tenant the request is admitted as (the handler passes the request's tenant): its `sites`
   * limit which sites are offered, its name and class are signed into the forward. Undefined = no
   * tenant (an open gateway): every fresh site, and no tenant header.
   */
  readonly tenant: ForwardingTenant | undefined;
}

/** The remote sites of one request, best first, none twice. */
export class SiteTargets implements TargetSource {
  readonly #deps: RemoteDeps;
  readonly #ask: SiteAsk;
  /** The remote sites as the mesh sees them when the local targets ran out (read once, then kept). */
  #sites: readonly RemoteSiteView[] | undefined;
  #choice: SiteChoice | undefined;
  #typical: number | undefined;
  readonly #usageAsk: UsageAsk;

  constructor(deps: RemoteDeps, ask: SiteAsk) {
    this.#deps = deps;
    this.#ask = ask;
    this.#usageAsk = new UsageAsk(ask.endpoint, ask.resolved);
  }

  async next(state: FailoverState): Promise<NextTarget> {
    const routing = this.#ask.observer?.routing();
    const choice = this.#choose(state, this.#deps.nextTurn());
    this.#choice = choice;
    const site = choice.chosen;
    routing?.end(siteRouteNote(choice));
    if (site === undefined) return { kind: 'none', stop: false };
    const key = this.#deps.mesh.key();
    if (key === undefined)
      return {
        kind: 'none',
        stop: false,
        failure: {
          target: { kind: 'site', id: site.id },
          code: 'not_tried',
          detail: "not tried, this site's key is not loaded yet",
        },
      };
    return {
      kind: 'target',
      target: siteTarget(this.#deps, this.#ask, { view: site, canFailOver: choice.alternatives > 0, key }, this.#usageAsk),
    };
  }

  /** A site would be chosen now (and this site's key is loaded to sign for it). */
  mayServe(state: FailoverState): boolean {
    return this.#deps.mesh.key() !== undefined && this.#choose(state, 0).chosen !== undefined;
  }

  #choose(state: FailoverState, turn: number): SiteChoice {
    const request = {
      model: this.#ask.resolved.model,
      promptTokens: this.#promptTokens(state.routeRequest.promptTokens),
      maxTokens: this.#ask.maxTokens,
      triedSites: state.triedSites,
      forwarded: this.#ask.forwarded,
      scope: this.#ask.tenant?.sites,
    };
    this.#sites ??= this.#deps.mesh.source.sites().filter((s) => s.id !== this.#deps.mesh.site);
    return chooseSite(request, this.#sites, this.#deps.reachability.unreachable(), turn);
  }

  /** What the sites said, for an answer no target served: each with why, the tried ones by their real failure. */
  verdicts(failures: FailoverState['failures']): SiteVerdicts | undefined {
    if (this.#sites === undefined) return undefined;
    return { excluded: siteExclusionsAfter(this.#choice?.excluded ?? [], failures), models: knownRemoteModels(this.#sites) };
  }

  /**
   * Sites are judged by a typical size unless a tokenizer counted it: the loose byte bound would
   * turn sites away that fit, and one that does not fit refuses, which fails over to the next.
   */
  #promptTokens(routed: number | undefined): number | undefined {
    if (this.#ask.exactCount) return routed;
    this.#typical ??= typicalTokens(promptText(this.#ask.endpoint, this.#ask.resolved.json));
    return Math.min(routed ?? 0, this.#typical);
  }
}

/** The site choice as the routing span records it: the site and how many others could serve, or why none. */
function siteRouteNote(choice: SiteChoice): RouteNote {
  const reasons = choice.excluded
    .slice(0, 8)
    .map((e) => `${e.site}: ${e.code}`)
    .join(', ');
  const reason =
    choice.chosen === undefined
      ? `no site${reasons === '' ? '' : `; excluded ${reasons}`}`
      : `${choice.alternatives} other site(s) could serve`;
  return { among: 'site', chosen: choice.chosen?.id, policy: 'site', reason, waitedMs: 0 };
}

interface ChosenSite {
  readonly view: RemoteSiteView;
  readonly canFailOver: boolean;
  readonly key: SiteKey;
}

function siteTarget(deps: RemoteDeps, ask: SiteAsk, site: ChosenSite, usageAsk: UsageAsk): Target {
  const id = site.view.id;
  const label = siteLabel(id);
  return {
    id: { kind: 'site', id },
    label,
    url: site.view.url,
    prepare: async (): Promise<Prepared> => {
      const url = site.view.url === undefined ? undefined : siteTargetUrl(site.view.url, ask.endpoint);
      if (url === undefined)
        return {
          kind: 'unsendable',
          outcome: {
            kind: 'failed',
            result: 'connect_error',
            error: `the site's record gives no usable http(s) url ('${site.view.url}')`,
          },
        };
      // Its streams are asked for usage like every OpenAI server's, and what asking added taken out again.
      const asked = usageAsk.forSite();
      const body = asked?.body ?? ask.resolved.body;
      const headers = upstreamRequestHeaders({
        client: ask.req.headers,
        apiKey: undefined,
        bodyBytes: body.length,
        requestId: ask.requestId,
        clientAddress: ask.req.socket.remoteAddress,
      });
      for (const name of NOT_FORWARDED_TO_SITES) delete headers[name];
      const signed = await signForward({
        method: 'POST',
        url: url.href,
        headers,
        body,
        site: deps.mesh.site,
        key: site.key,
        nowMs: deps.clock.now(),
        lifetimeMs: deps.mesh.maxClockSkewMs(),
        tenant: ask.tenant === undefined ? undefined : { name: ask.tenant.name, priority: ask.tenant.priority },
      });
      const call = {
        pool: deps.pools.get({ name: id, url: url.origin }),
        path: url.pathname + url.search,
        headers: signed,
        extraResponseHeaders: { 'x-switchyard-site': id, 'x-request-id': ask.requestId },
        // Another site's error answer names its nodes and its view: this site answers in its own terms.
        passOnErrors: false,
        anyMedia: answersMedia(ask.endpoint),
        headersTimeoutMs: undefined,
        // A site's stream that breaks after the client had bytes ends with the client API's terminal error event.
        errorDialect: errorDialectFor(ask.endpoint),
        ...asked,
      };
      return { kind: 'send', call };
    },
    canFailOver: () => site.canFailOver,
    release: () => {},
    conclude: (outcome: AttemptOutcome): AttemptVerdict => {
      const feedback = judgeSiteAttempt(id, outcome);
      deps.events.emit('mesh:forwarded', { site: id, result: feedback.event.result });
      if (feedback.reachable === true) deps.reachability.reached(id);
      else if (feedback.reachable === false) deps.reachability.failed(id, feedback.event.error ?? feedback.event.result);
      return feedback.verdict;
    },
  };
}
