// Remote sites as targets ([mesh]): tried after the local nodes, each chosen by routing/remote's
// chooseSite (pure) among the fresh sites that list the model and fit it, within the request's
// tenant's site scope, none tried twice. A site's request is signed as this site once per attempt
// (mesh/forwarding), states the request's tenant and class in a signed header, carries no client
// credential, and none of its error answers reaches the client. Its outcome feeds its
// reachability back-off and `mesh:forwarded`. A session a site served is remembered on that site
// (the one session table, as a target kind): its next turns lead with that site, before the local
// nodes, while it can take them (routing/remote/site-session.ts), and leave it with why otherwise.

import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { RouteNote } from '#src/core/tracing.ts';
import type { TenantSpec } from './inbound-tenant.ts';
import { answersMedia } from '#src/config/index.ts';
import { signForward, siteTargetUrl, TENANT_HEADER, type MeshLink } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import type { SessionPort } from '#src/ports/index.ts';
import {
  chooseSite,
  knownRemoteModels,
  sessionKeyParts,
  sessionSite,
  siteSessionTarget,
  siteSessionVerdict,
  type RemoteSiteView,
  type RouteRequest,
  type SiteChoice,
  type SiteReachability,
  type SiteRequest,
} from '#src/routing/index.ts';
import type { AttemptOutcome } from '../attempt/attempt-outcome.ts';
import type { NextTarget, RequestAsk, TargetSource } from '../failover/failover-loop.ts';
import type { SourceLead } from '../feature/request-feature.ts';
import { judgeSiteAttempt, siteExclusionsAfter, type FailoverState } from '../failover/attempt-feedback.ts';
import type { HeldBytesBudget } from '../attempt/held-answer.ts';
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
  /** The session table (in-thread only): a session a site served goes back there; undefined = sessions stay local. */
  readonly sessions?: SessionPort | undefined;
}

const NONE_TRIED: ReadonlySet<string> = new Set();

/** The remote sites of one request, best first, none twice. */
export class SiteTargets implements TargetSource {
  readonly #deps: RemoteDeps;
  readonly #ask: SiteAsk;
  /** The remote sites as the mesh sees them when first asked (a session's lead, or the local targets ran out), then kept. */
  #viewed: readonly RemoteSiteView[] | undefined;
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
    if (key === undefined) return notTried(site.id);
    const route = state.routeRequest;
    const session =
      this.#ask.sessions === undefined
        ? undefined
        : sessionRoute(route, `session moved to site ${site.id}: no local node could serve it`);
    return {
      kind: 'target',
      target: siteTarget(
        this.#deps,
        this.#ask,
        { view: site, canFailOver: choice.alternatives > 0, key, session, route },
        this.#usageAsk,
      ),
    };
  }

  /**
   * A request whose session a site served last: that site first while it can take it (fresh,
   * serving the model, reachable, in scope), else why it left; undefined = not a site's session.
   */
  lead(route: RouteRequest): SourceLead | undefined {
    const remembered = this.#ask.sessions?.remembered(route);
    const siteId = remembered === undefined ? undefined : sessionSite(remembered);
    if (siteId === undefined) return undefined;
    const verdict = siteSessionVerdict(
      this.#request(route, NONE_TRIED),
      siteId,
      this.#sites(),
      this.#deps.reachability.unreachable(),
    );
    if (verdict.kind === 'left') return verdict;
    const key = this.#deps.mesh.key();
    if (key === undefined) return { kind: 'left', why: "this site's key is not loaded yet" };
    const chosen = {
      view: verdict.site,
      canFailOver: true,
      key,
      session: sessionRoute(route, `session kept on site ${siteId}`),
      route,
    };
    const target = siteTarget(this.#deps, this.#ask, chosen, this.#usageAsk);
    const observer = this.#ask.observer;
    let given = false;
    const first: TargetSource = {
      next: () => {
        if (given) return { kind: 'none', stop: false };
        given = true;
        const policy = 'site';
        observer?.routing().end({ among: 'site', chosen: siteId, policy, reason: `session kept on site ${siteId}`, waitedMs: 0 });
        return { kind: 'target', target };
      },
    };
    return { kind: 'first', source: first };
  }

  /** A site would be chosen now (and this site's key is loaded to sign for it). */
  mayServe(state: FailoverState): boolean {
    return this.#deps.mesh.key() !== undefined && this.#choose(state, 0).chosen !== undefined;
  }

  #choose(state: FailoverState, turn: number): SiteChoice {
    const request = this.#request(state.routeRequest, state.triedSites);
    return chooseSite(request, this.#sites(), this.#deps.reachability.unreachable(), turn);
  }

  #request(route: RouteRequest, triedSites: ReadonlySet<string>): SiteRequest {
    return {
      model: this.#ask.resolved.model,
      promptTokens: this.#promptTokens(route.promptTokens),
      maxTokens: this.#ask.maxTokens,
      triedSites,
      forwarded: this.#ask.forwarded,
      scope: this.#ask.tenant?.sites,
    };
  }

  /** The remote sites as the mesh sees them when first asked (read once, then kept). */
  #sites(): readonly RemoteSiteView[] {
    this.#viewed ??= this.#deps.mesh.source.sites().filter((s) => s.id !== this.#deps.mesh.site);
    return this.#viewed;
  }

  /** What the sites said, for an answer no target served: each with why, the tried ones by their real failure. */
  verdicts(failures: FailoverState['failures']): SiteVerdicts | undefined {
    if (this.#viewed === undefined) return undefined;
    return { excluded: siteExclusionsAfter(this.#choice?.excluded ?? [], failures), models: knownRemoteModels(this.#viewed) };
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

/** A site that could not be sent to: this site's key is not loaded yet. */
function notTried(id: string): NextTarget {
  return {
    kind: 'none',
    stop: false,
    failure: { target: { kind: 'site', id }, code: 'not_tried', detail: "not tried, this site's key is not loaded yet" },
  };
}

/** What a session's turn sent to a site says (`x-switchyard-route`), and that its session is kept there if it answers. */
interface SiteSession {
  readonly reason: string;
}

function sessionRoute(route: RouteRequest, said: string): SiteSession | undefined {
  if (route.sessionKey === undefined) return undefined;
  return { reason: `${said} (${sessionKeyParts(route.sessionKey).source})` };
}

/** What a site's answer carries besides its own headers: the site, the request id, and a session's route. */
function siteAnswerHeaders(id: string, requestId: string, session: SiteSession | undefined): Readonly<Record<string, string>> {
  const headers: Record<string, string> = { 'x-switchyard-site': id, 'x-request-id': requestId };
  if (session !== undefined) headers['x-switchyard-route'] = `site; ${session.reason}`;
  return headers;
}

interface ChosenSite {
  readonly view: RemoteSiteView;
  readonly canFailOver: boolean;
  readonly key: SiteKey;
  /** The request's session, if any (and the session table is here): remembered on this site when it answers. */
  readonly session: SiteSession | undefined;
  readonly route: RouteRequest;
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
        extraResponseHeaders: siteAnswerHeaders(id, ask.requestId, site.session),
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
      const verdict = feedback.verdict;
      // The session's turn was served there: its next turns go back while the site can take them.
      if (site.session !== undefined && verdict.next === 'answered' && verdict.status < 300)
        ask.sessions?.keep(site.route, siteSessionTarget(id));
      return verdict;
    },
  };
}
