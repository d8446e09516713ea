// The tenants' contribution to the request plane ([tenants], or `[server] api_keys` as the
// `default` tenant; the seam: ../feature/request-feature.ts): every keyed public route asks for a
// client key first — each key names its tenant (tenants/key-directory.ts), whose caller
// (tenant-callers.ts) carries its scope and limits gates and filters the listings. A missing or
// unknown key is refused 401 (an inference route reports it as a request). Without any tenant the
// feature is absent and every request is the open caller's.

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { OPEN_TENANT, rotatingDirectory } from '#src/tenants/index.ts';
import { presentedKey, unauthorized } from '../http/auth.ts';
import { OPEN_CALLER, type RequestFeature, type RouteWrapper } from '../feature/request-feature.ts';
import type { TenantCallers } from './tenant-callers.ts';

export function tenantsFeature(tenants: () => readonly TenantSpec[], callers: TenantCallers): RequestFeature {
  return { clients: clientKeys(tenants, callers) };
}

/** The caller the request's key names (401 for none or an unknown one); a forward, identified already, passes. */
function clientKeys(tenants: () => readonly TenantSpec[], callers: TenantCallers): RouteWrapper {
  const directory = rotatingDirectory(tenants);
  return (next, refuse) => (req, res, url, caller) => {
    if (caller !== undefined) return next(req, res, url, caller);
    const keys = directory();
    const tenant = keys.open ? OPEN_TENANT : keys.identify(presentedKey(req.headers));
    if (tenant === undefined) {
      req.resume();
      return refuse(
        req,
        res,
        url,
        unauthorized('Incorrect or missing API key. Send it as "Authorization: Bearer <key>" (or "x-api-key: <key>").'),
      );
    }
    return next(req, res, url, tenant === OPEN_TENANT ? OPEN_CALLER : callers.of(tenant));
  };
}
