// Federation's contribution to the request plane ([mesh]; the seam: ../feature/request-feature.ts):
// the forwards another site sends are taken before the client check — verified (forward-in.ts),
// then served as their site's tenant, with two gates of their own: the body must be the one signed,
// and the signature is used up only once every other gate admitted the request — the remote sites
// are the target source tried after the local nodes (site-target.ts), and their fresh models are
// listed beside the local ones, within the caller's site scope (remote-models.ts). What it needs of
// the tenants — a tenant's caller, a caller's tenant — it asks the tenants' callers it is given
// (ForwardTenants), so the mesh's request half names no tenant code.

import type { TenantSpec } from './inbound-tenant.ts';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import { FORWARDED_FROM } from '#src/core/forwarded-from.ts';
import { fieldOf, withField } from '#src/core/request-fields.ts';
import { claimsForward } from '#src/mesh/forwarding/index.ts';
import type { SessionPort } from '#src/ports/index.ts';
import { inSiteScope } from '#src/routing/index.ts';
import type { Caller, RequestFeature, RequestGate, RouteWrapper } from '../feature/request-feature.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { acceptInboundBody, verifyInbound, type ForwardInDeps, type InboundForward, type PeerTenancy } from './forward-in.ts';
import { freshRemoteModelList } from './remote-models.ts';
import { SiteTargets, type ForwardingTenant, type RemoteDeps } from './site-target.ts';

/** What federation asks of the tenants: their callers ([tenants]' request half, proxy/tenants/tenant-callers.ts, passes). */
export interface ForwardTenants {
  /** The caller a tenant's requests are served as (its scope and limits gates): a forward is its site's tenant's. */
  ofSpec(tenant: TenantSpec): Caller;
  /** The tenant a caller's requests are served as (its name and class, stated in a forward; its site scope); undefined = none. */
  tenantOf(caller: Caller): ForwardingTenant | undefined;
}

export interface SitesFeatureDeps {
  readonly remote: RemoteDeps;
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  /** The config's tenants and `[[mesh.sites]]` pins, read once per verified forward. */
  readonly tenancy: () => PeerTenancy;
  /** The tenants' callers: a forward is served as its site's tenant, and a tenant's requests go within its site scope. */
  readonly tenants: ForwardTenants;
  /** The session table (in-thread planes only): a session a site served goes back there. */
  readonly sessions: SessionPort | undefined;
}

export function sitesFeature(deps: SitesFeatureDeps): RequestFeature {
  const { remote, tenants } = deps;
  const mesh = remote.mesh;
  return {
    forwards: forwardsRoute({ mesh, clock: deps.clock, events: deps.events, tenancy: deps.tenancy }, tenants),
    targets: (ask) =>
      new SiteTargets(remote, {
        ...ask,
        forwarded: fieldOf(ask.caller.labels.fields, FORWARDED_FROM) !== undefined,
        tenant: tenants.tenantOf(ask.caller),
        sessions: deps.sessions,
      }),
    // Remote models only from the sites the caller's requests may be forwarded to.
    models: (caller, local) => {
      const tenant = tenants.tenantOf(caller);
      return freshRemoteModelList(
        mesh,
        local,
        deps.clock.now(),
        tenant === undefined ? undefined : (site) => inSiteScope(tenant.sites, site),
      );
    },
  };
}

/**
 * A request claiming to be forwarded (the forwarded-by header or a signature) is verified instead
 * of asking for a client key: refused 401 naming the problem, or served as its site's tenant.
 */
function forwardsRoute(deps: ForwardInDeps, tenants: ForwardTenants): RouteWrapper {
  return (next) => (req, res, url, caller) =>
    claimsForward(req.headers)
      ? verifyInbound(deps, req, res, url, (inbound) => next(req, res, url, inboundCaller(inbound, deps.events, tenants)))
      : next(req, res, url, caller);
}

/** A verified forward's caller: its site's tenant's gates (scope, limits), then the forward's own. */
function inboundCaller(inbound: InboundForward, events: EventBus<ProxyEvents>, tenants: ForwardTenants): Caller {
  const tenant = inbound.tenant === undefined ? undefined : tenants.ofSpec(inbound.tenant);
  return {
    // Queued as its site's tenant with the class capped by the one it stated (inbound-tenant.ts).
    queue: inbound.queue,
    gates: [...(tenant?.gates ?? []), forwardGate(inbound, events)],
    visible: tenant?.visible,
    // Its site's tenant's parts (that tenant, for federation's site scope and tenant header).
    parts: tenant?.parts,
    labels: {
      tenant: inbound.queue.name,
      fields: withField(undefined, FORWARDED_FROM, {
        site: inbound.site,
        claimedTenant: inbound.claimedTenant,
        claimedClass: inbound.claimedClass,
      }),
    },
  };
}

/**
 * The body must be the one signed; the signature is used up only once admitted (after the
 * tenant's limits), so a forward refused before costs no replay entry.
 */
function forwardGate(inbound: InboundForward, events: EventBus<ProxyEvents>): RequestGate {
  return {
    body: (raw, req) => {
      const refused = acceptInboundBody(inbound, req.headers, raw, events);
      return refused === undefined ? undefined : { kind: 'refused', error: refused };
    },
    admit: () => inbound.useSignature().then((used) => (used === undefined ? undefined : { kind: 'refused', error: used })),
  };
}
