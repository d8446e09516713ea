// The 503 (nothing can take the request) and 502 (every node tried failed) answers, with the
// per-reason counts from the routing decision so the client can tell "down" from "not served".

import { GatewayError } from '#src/core/errors.ts';
import { countByCode, type Exclusion } from '#src/routing/index.ts';

export function noNodeAvailable(model: string, excluded: readonly Exclusion[], retryAfterSeconds: number): GatewayError {
  const counts = countByCode(excluded);
  const summary = Object.entries(counts)
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ');
  const message =
    excluded.length === 0
      ? `no healthy node available for model '${model}': no nodes are configured`
      : `no healthy node available for model '${model}': ${excluded.length} excluded (${summary})`;
  return new GatewayError('GW_NO_AVAILABLE_NODE', message, {
    status: 503,
    openaiType: 'server_error',
    openaiCode: 'no_healthy_node',
    retryAfterSeconds,
    details: { exclusions: counts },
  });
}

export function allAttemptsFailed(model: string, failures: readonly string[], retryAfterSeconds: number): GatewayError {
  return new GatewayError(
    'GW_UPSTREAM_UNREACHABLE',
    `every node tried for model '${model}' failed before answering: ${failures.join('; ')}`,
    { status: 502, openaiType: 'server_error', openaiCode: 'upstream_failed', retryAfterSeconds },
  );
}
