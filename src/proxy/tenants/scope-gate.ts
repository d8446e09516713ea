// A tenant's model scope as a request gate: a model outside it is answered exactly as a model no
// node serves — the same admission wait, the same 404, suggestions only from inside the scope,
// the sites asked as for an unknown model (../inference/unknown-answer.ts does so for any gate
// that answers so) — and never sent anywhere.

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { allowsModel } from '#src/tenants/index.ts';
import type { AnsweredAsUnknown, RequestGate } from '../feature/request-feature.ts';

/** The names a tenant may be told of. */
export function scopeOf(spec: TenantSpec): (name: string) => boolean {
  return (name) => allowsModel(spec, name);
}

export function scopeGate(visible: (name: string) => boolean): RequestGate {
  const unknown: AnsweredAsUnknown = Object.freeze({ kind: 'unknown', visible });
  return { model: (model) => (visible(model) ? undefined : unknown) };
}
