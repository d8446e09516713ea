// A request's tenant at the request path: its model scope (a model outside it is answered exactly
// as a model no node serves: the same admission, the same refusal, suggestions only from inside
// the scope) and its limits (the admission port's ledger: 429 with OpenAI's headers, or admitted
// with its reservation, settled from the answer's usage when the request ends).

import type { ServerResponse } from 'node:http';
import type { EventBus } from '#src/core/events.ts';
import type { GatewayError } from '#src/core/errors.ts';
import type { AdmissionPort } from '#src/ports/index.ts';
import type { RouteRequest } from '#src/routing/index.ts';
import type { QueueSettings } from '#src/scheduler/index.ts';
import {
  allowsEveryModel,
  allowsModel,
  limitedError,
  limitedHeaders,
  rateHeaders,
  tenantReservation,
  type Tenant,
} from '#src/tenants/index.ts';
import type { ProxyEvents } from '../request/proxy-events.ts';
import type { RequestReport } from '../request/request-report.ts';

/**
 * What an out-of-scope request is routed as: a name no node lists, so the scheduler treats it as
 * it treats any unknown model (a listing refresh on a miss, the same wait, the same exclusions).
 */
export const OUT_OF_SCOPE_MODEL = '\u0000out-of-scope';

/** The names a tenant may be told of; undefined = every name (no tenant, or a scope of "*"). */
export function visibleTo(tenant: Tenant | undefined): ((name: string) => boolean) | undefined {
  if (tenant === undefined || allowsEveryModel(tenant.spec)) return undefined;
  const { spec } = tenant;
  return (name) => allowsModel(spec, name);
}

/** Routes an out-of-scope request as an unknown model; an admission (a node that takes any name) is returned at once. */
export async function admitAsUnknown(
  scheduler: Pick<AdmissionPort, 'admit'>,
  routeRequest: RouteRequest,
  settings: QueueSettings,
  signal: AbortSignal,
): Promise<Extract<Awaited<ReturnType<AdmissionPort['admit']>>, { kind: 'refused' }>> {
  const admission = await scheduler.admit(
    { ...routeRequest, model: OUT_OF_SCOPE_MODEL, group: undefined },
    settings,
    signal,
    true,
  );
  if (admission.kind === 'refused') return admission;
  admission.release();
  admission.load?.settle('failed');
  return { kind: 'refused', reason: 'unavailable', excluded: [], waitedMs: admission.waitedMs };
}

export interface LimitAsk {
  readonly tenant: Tenant;
  readonly model: string;
  readonly promptTokens: number;
  readonly maxTokens: number | undefined;
  readonly completionReserveTokens: number;
  /** The answers asked (`n`, `best_of`): each reserves max_tokens (request/prompt-size.ts). */
  readonly choices: number;
}

/**
 * Judges the request by its tenant's limits. Limited: answers 429 and reports it (false).
 * Admitted: the answer will carry the tenant's x-ratelimit-* headers, and the reservation is
 * settled when the request ends, from the answer's usage (true).
 */
export async function admitWithinLimits(
  deps: { readonly scheduler: Pick<AdmissionPort, 'admitTenant'>; readonly events: EventBus<ProxyEvents> },
  ask: LimitAsk,
  out: {
    readonly res: ServerResponse;
    readonly report: RequestReport;
    readonly requestId: string;
    readonly fail: (error: GatewayError, headers: Record<string, string>) => void;
  },
): Promise<boolean> {
  const { tenant } = ask;
  const reserveTokens = tenantReservation(ask.promptTokens, ask.maxTokens, ask.completionReserveTokens, ask.choices);
  const decided = await deps.scheduler.admitTenant(
    { tenant: tenant.spec.name, model: ask.model, promptTokens: ask.promptTokens, reserveTokens },
    tenant.limited,
  );
  if (decided.kind === 'limited') {
    deps.events.emit('proxy:tenant-limited', { tenant: tenant.spec.name, reason: decided.refusal.reason });
    out.fail(limitedError(decided.refusal), limitedHeaders(decided.refusal));
    return false;
  }
  for (const [name, value] of Object.entries(rateHeaders(decided.figures))) out.res.setHeader(name, value);
  const { report } = out;
  report.onFinish = (status) => {
    const usage = report.usage;
    // Served = something reached the client: its usage says how much, else its reservation is charged.
    const served = usage !== undefined || (status >= 200 && status < 400);
    decided.settle({ served, promptTokens: usage?.promptTokens, completionTokens: usage?.completionTokens });
  };
  return true;
}
