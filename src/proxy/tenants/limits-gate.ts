// A tenant's limits as a request gate (docs/tenants.md, "Admission and limits"): judged by the
// tenant-admission port once the prompt is sized. Limited: 429 with OpenAI's headers. Admitted:
// the answer carries the tenant's x-ratelimit-* headers, and the reservation is settled when the
// request ends, from the answer's usage.

import type { EventBus } from '#src/core/events.ts';
import {
  limitedError,
  limitedHeaders,
  rateHeaders,
  tenantReservation,
  type Tenant,
  type TenantAdmission,
  type TenantAdmissionPort,
} from '#src/tenants/index.ts';
import type { Admitted, Refused, RequestGate } from '../feature/request-feature.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import { requestedChoices } from '../request/prompt-size.ts';

export function limitsGate(
  tenant: Tenant,
  deps: { readonly admission: TenantAdmissionPort; readonly events: EventBus<ProxyEvents> },
): RequestGate {
  const name = tenant.spec.name;
  const verdictOf = (decided: TenantAdmission): Refused | Admitted => {
    if (decided.kind === 'limited') {
      deps.events.emit('proxy:tenant-limited', { tenant: name, reason: decided.refusal.reason });
      return { kind: 'refused', error: limitedError(decided.refusal), headers: limitedHeaders(decided.refusal) };
    }
    return {
      kind: 'admitted',
      headers: rateHeaders(decided.figures),
      finished: (status, usage) => {
        // Served = something reached the client: its usage says how much, else its reservation is charged.
        const served = usage !== undefined || (status >= 200 && status < 400);
        decided.settle({ served, promptTokens: usage?.promptTokens, completionTokens: usage?.completionTokens });
      },
    };
  };
  return {
    admit: (r) => {
      const promptTokens = r.promptTokens ?? 0;
      // A count (count_tokens) reserves no tokens: it counts against the request rate only.
      const reserveTokens = tenantReservation(
        promptTokens,
        r.counts ? 0 : r.maxTokens,
        r.settings.completionReserveTokens,
        requestedChoices(r.endpoint, r.resolved.json),
      );
      return deps.admission
        .admitTenant({ tenant: name, model: r.resolved.model, promptTokens, reserveTokens }, tenant.limited)
        .then(verdictOf);
    },
  };
}
