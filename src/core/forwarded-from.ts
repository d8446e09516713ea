// A forwarded request's sender (issue 39: a feature's own field, core/request-fields.ts): set by
// the mesh's request half (proxy/sites/) as the caller of a verified forward, under the mesh's name,
// and read by what the mesh reports of it (mesh/forwarding/forwarded-line.ts: the request log's
// from_site and from_tenant) and by the trace's span (its forwarding site). Shared vocabulary, as
// core/site-rows.ts is: tracing names no [mesh] file.

import { fieldKey } from './request-fields.ts';

/** Who a forwarded request came from: the pinned site that sent it and the tenant and class it stated (signed, not trusted). */
export interface ForwardedFor {
  readonly site: string;
  /** Unbounded text: for accounting rows and logs, never a metrics label. */
  readonly claimedTenant: string | undefined;
  /** The priority class it stated (TenantPriority), undefined = none. */
  readonly claimedClass: string | undefined;
}

export const FORWARDED_FROM = fieldKey<ForwardedFor>('mesh');
