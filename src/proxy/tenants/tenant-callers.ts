// A tenant as the request plane serves it ([tenants], docs/tenants.md): the caller its requests
// are served as (../feature/request-feature.ts) — its place in the queues, the names it may be told
// of, and its two gates: its model scope (a model outside it is answered exactly as a model no
// node serves) and its limits (scope-gate.ts, limits-gate.ts). Built once per tenant spec (a
// reload's specs build new ones), never per request.

import type { EventBus } from '#src/core/events.ts';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { partIn, partsOf } from '#src/core/part-key.ts';
import { allowsEveryModel, CALLER_TENANT, tenantOf, type Tenant, type TenantAdmissionPort } from '#src/tenants/index.ts';
import type { Caller } from '../feature/request-feature.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { limitsGate } from './limits-gate.ts';
import { scopeGate, scopeOf } from './scope-gate.ts';

export interface TenantCallerDeps {
  /** The tenant-admission port: the owner's one ledger (or [cluster]'s count across replicas). */
  readonly admission: TenantAdmissionPort;
  readonly events: EventBus<ProxyEvents>;
}

export class TenantCallers {
  readonly #deps: TenantCallerDeps;
  readonly #bySpec = new WeakMap<TenantSpec, Caller>();

  constructor(deps: TenantCallerDeps) {
    this.#deps = deps;
  }

  /** The caller of a tenant the client keys (or a forwarding site's pin) name. */
  of(tenant: Tenant): Caller {
    const known = this.#bySpec.get(tenant.spec);
    if (known !== undefined) return known;
    const caller = callerOf(tenant, this.#deps);
    this.#bySpec.set(tenant.spec, caller);
    return caller;
  }

  /** The caller of a tenant named by its spec. */
  ofSpec(spec: TenantSpec): Caller {
    return this.#bySpec.get(spec) ?? this.of(tenantOf(spec));
  }

  /** The tenant a caller's requests are served as (its name, class and site scope); undefined = none (the open caller). */
  tenantOf(caller: Caller): Pick<TenantSpec, 'name' | 'priority' | 'sites'> | undefined {
    return partIn(caller.parts, CALLER_TENANT);
  }
}

/** Every tenant's requests are judged by its limits (one without any is still counted); a scope of "*" adds no gate. */
function callerOf(tenant: Tenant, deps: TenantCallerDeps): Caller {
  const { spec } = tenant;
  const limits = limitsGate(tenant, deps);
  // Reported under its name, as it is queued.
  const labels = { tenant: tenant.queue.name };
  // Its tenant, for federation's site scope and tenant header.
  const parts = partsOf(CALLER_TENANT, spec);
  if (allowsEveryModel(spec)) return { queue: tenant.queue, gates: [limits], labels, parts };
  const visible = scopeOf(spec);
  return { queue: tenant.queue, gates: [scopeGate(visible), limits], visible, labels, parts };
}
