// Forwarding to another site when no local node could serve a request: choose a site (pure,
// routing/remote), sign the request as this site (mesh/forwarding), send it with the same attempt
// strategy as a node's, and fail over to another site while nothing has reached the client. A
// site that fails before its first byte backs off; one that answers is reachable again. No error
// answer of a site reaches the client: why each site tried failed is said in this site's words.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { signForward, siteTargetUrl, type MeshLink } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { chooseSite, knownRemoteModels, type SiteExclusion, type SiteReachability } from '#src/routing/index.ts';
import { forwardAttempt, type AttemptOutcome } from './forward.ts';
import type { HeldBytesBudget } from './held-budget.ts';
import { upstreamRequestHeaders } from './hop-headers.ts';
import type { ProxyEvents } from './proxy-events.ts';
import type { Finish } from './request-report.ts';
import type { RequestSettings } from './request-settings.ts';
import type { SiteVerdicts } from './respond-refused.ts';
import type { UpstreamErrorMeaning } from './upstream-error.ts';
import type { UpstreamPools } from './upstream-pools.ts';

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
const NOT_FORWARDED_TO_SITES = ['cookie', 'api-key', 'x-goog-api-key', 'openai-organization', 'openai-project', 'signature', 'signature-input', 'content-digest'];

export interface RemoteAsk {
  readonly settings: RequestSettings;
  readonly endpoint: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly model: string;
  readonly body: Buffer;
  readonly promptTokens: number | undefined;
  readonly maxTokens: number | undefined;
  readonly requestId: string;
  readonly startedMs: number;
  readonly finish: Finish;
  /** The request was itself forwarded here: it never leaves (every site is excluded as `forwarded`). */
  readonly forwarded: boolean;
}

export type RemoteResult =
  | { readonly kind: 'answered' }
  | {
      readonly kind: 'none';
      readonly sites: SiteVerdicts;
      readonly failures: readonly string[];
      readonly lastRefusal: UpstreamErrorMeaning | undefined;
    };

/** The label a forwarded request's attempt and report carry in place of a node name. */
export const siteLabel = (site: string): string => `site:${site}`;

export async function forwardToSites(deps: RemoteDeps, ask: RemoteAsk): Promise<RemoteResult> {
  const { mesh } = deps;
  const sites = mesh.source.sites().filter((s) => s.id !== mesh.site);
  const key = mesh.key();
  /** Why each site tried failed, in this site's words: listed in place of `already_tried`. */
  const tried = new Map<string, SiteExclusion>();
  const failures: string[] = [];
  let lastRefusal: UpstreamErrorMeaning | undefined;
  const failed = (site: string, exclusion: Omit<SiteExclusion, 'site'>): void => {
    failures.push(`${siteLabel(site)}: ${exclusion.detail ?? exclusion.code}`);
    tried.set(site, { site, ...exclusion });
  };
  for (;;) {
    const request = { model: ask.model, promptTokens: ask.promptTokens, maxTokens: ask.maxTokens, triedSites: new Set(tried.keys()), forwarded: ask.forwarded };
    const choice = chooseSite(request, sites, deps.reachability.unreachable(), deps.nextTurn());
    const site = choice.chosen;
    if (site?.url === undefined || key === undefined) {
      if (site !== undefined) failures.push(`${siteLabel(site.id)}: not tried, this site's key is not loaded yet`);
      const excluded = choice.excluded.map((e) => (e.code === 'already_tried' ? (tried.get(e.site) ?? e) : e));
      return { kind: 'none', sites: { excluded, models: knownRemoteModels(sites) }, failures, lastRefusal };
    }
    const url = siteTargetUrl(site.url, ask.endpoint);
    const outcome: AttemptOutcome =
      url === undefined
        ? { kind: 'failed', result: 'connect_error', error: `the site's record gives no usable http(s) url ('${site.url}')` }
        : await attemptSite(deps, ask, { id: site.id, url, canFailOver: choice.alternatives > 0, key });
    deps.events.emit('mesh:forwarded', { site: site.id, result: resultOf(outcome) });
    switch (outcome.kind) {
      case 'failed':
        if (outcome.result === 'http_error') {
          // The site answered (it is reachable) with a refusal of its own: named by status and code, never passed on.
          deps.reachability.reached(site.id);
          failed(site.id, { code: 'refused', detail: outcome.error });
        } else {
          deps.reachability.failed(site.id, outcome.error);
          failed(site.id, { code: 'unreachable', detail: outcome.error });
        }
        continue;
      case 'refused': {
        // The site answered (it is reachable) but cannot take this request: try another.
        deps.reachability.reached(site.id);
        const detail = `answered ${outcome.status} ${outcome.refusal.kind}`;
        // Its figures are kept (a context size), its words are not (they name its nodes).
        lastRefusal = { ...outcome.refusal, message: `${siteLabel(site.id)} ${detail}` };
        failed(site.id, { code: 'refused', detail });
        continue;
      }
      case 'delivered':
        // Only a 2xx is delivered from a site (its errors are never passed on): it is reachable.
        deps.reachability.reached(site.id);
        ask.finish(siteLabel(site.id), outcome.status, { firstByteMs: outcome.firstByteMs });
        return { kind: 'answered' };
      case 'broken':
        deps.reachability.reached(site.id);
        ask.finish(siteLabel(site.id), outcome.status, { firstByteMs: outcome.firstByteMs, brokenError: outcome.error });
        return { kind: 'answered' };
      case 'client_gone':
        ask.finish(siteLabel(site.id), 499, { clientAborted: true });
        return { kind: 'answered' };
    }
  }
}

async function attemptSite(deps: RemoteDeps, ask: RemoteAsk, site: { id: string; url: URL; canFailOver: boolean; key: SiteKey }): Promise<AttemptOutcome> {
  const headers = upstreamRequestHeaders({
    client: ask.req.headers,
    apiKey: undefined,
    bodyBytes: ask.body.length,
    requestId: ask.requestId,
    clientAddress: ask.req.socket.remoteAddress,
  });
  for (const name of NOT_FORWARDED_TO_SITES) delete headers[name];
  const signed = await signForward({
    method: 'POST',
    url: site.url.href,
    headers,
    body: ask.body,
    site: deps.mesh.site,
    key: site.key,
    nowMs: deps.clock.now(),
    lifetimeMs: deps.mesh.maxClockSkewMs(),
  });
  return forwardAttempt({
    pool: deps.pools.get({ name: site.id, url: site.url.origin }),
    path: site.url.pathname + site.url.search,
    headers: signed,
    body: ask.body,
    res: ask.res,
    nodeName: siteLabel(site.id),
    extraResponseHeaders: { 'x-switchyard-site': site.id, 'x-request-id': ask.requestId },
    canFailOver: () => site.canFailOver,
    // Another site's error answer names its nodes and its view: this site answers in its own terms.
    passOnErrors: false,
    startedMs: ask.startedMs,
    totalTimeoutMs: ask.settings.totalTimeoutMs,
    clock: deps.clock,
    maxHeldBodyBytes: ask.settings.maxHeldBodyBytes,
    heldBudget: deps.heldBudget,
  });
}

function resultOf(outcome: AttemptOutcome): string {
  switch (outcome.kind) {
    case 'failed':
      return outcome.result;
    case 'refused':
      return outcome.refusal.kind;
    case 'delivered':
      return outcome.status >= 500 ? 'http_5xx' : 'success';
    case 'broken':
      return 'stream_error';
    case 'client_gone':
      return 'client_abort';
  }
}
