// How a forwarded request this site does not accept is answered: each rejection (verify-forward.ts)
// as an HTTP error the sending site (or a client posing as one) reads — 401 for what it cannot
// prove, 400 for a tenant header it states in a form this side cannot read, 429 for its own full
// share of the replay memory, 503 when that memory cannot be asked.

import { GatewayError } from '#src/core/errors.ts';
import { TENANT_HEADER } from './forward-tenant.ts';

/** Why a forward is refused (verify-forward.ts decides which), and how its answer names it. */
export const FORWARD_REJECTIONS = {
  unsigned: 'unsigned forwarded request',
  unknown_site: 'unknown site',
  own_site: 'signed as this site',
  bad_signature: 'bad signature',
  expired: 'signature expired',
  replayed: 'signature replayed',
  replay_memory_full: 'too many forwarded requests to check for replay',
  replay_unavailable: 'the replay check did not answer',
  digest_mismatch: 'content digest mismatch',
  malformed_tenant: `malformed ${TENANT_HEADER} header`,
} as const;
export type ForwardRejection = keyof typeof FORWARD_REJECTIONS;

export function forwardRefused(rejection: ForwardRejection, detail: string, retryAfterSeconds?: number): GatewayError {
  if (rejection === 'malformed_tenant') {
    // Signed by a pinned site, so no forgery: a sender that states its tenant in a form this side cannot read.
    return new GatewayError('GW_BAD_REQUEST', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
      status: 400,
      openaiType: 'invalid_request_error',
      openaiCode: rejection,
      param: TENANT_HEADER,
    });
  }
  if (rejection === 'replay_memory_full') {
    // The sending site's own share is full: it forwards faster than its share holds; retry later.
    return new GatewayError('GW_RATE_LIMITED', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
      status: 429,
      openaiType: 'requests',
      openaiCode: rejection,
      retryAfterSeconds: retryAfterSeconds ?? 1,
    });
  }
  if (rejection === 'replay_unavailable') {
    // Not the sender's fault: a retry (or another site) will do.
    return new GatewayError('GW_NO_AVAILABLE_NODE', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
      status: 503,
      openaiType: 'server_error',
      openaiCode: rejection,
      retryAfterSeconds: retryAfterSeconds ?? 1,
    });
  }
  return new GatewayError('GW_UNAUTHORIZED', `${FORWARD_REJECTIONS[rejection]}: ${detail}`, {
    status: 401,
    openaiType: 'authentication_error',
    openaiCode: rejection,
  });
}
