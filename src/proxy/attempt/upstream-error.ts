// Pure: what an upstream error answer means (PROTOCOLS.md §6.1), so the gateway can re-route or
// answer in OpenAI's own shapes instead of passing each server's dialect through. Every answer is
// read in every kind's dialect, as `auto` reads them: a node's configured kind may be `auto`, or a
// proxy in front of another kind of server, and a refusal missed would be passed through as is.

import { refusalInAnyDialect, routeMissing, type RefusalMeaning } from '#src/kinds/index.ts';

export type UpstreamErrorMeaning = RefusalMeaning;

export function interpretUpstreamError(status: number, bodyText: string): UpstreamErrorMeaning | undefined {
  // Only a 400 or 404 can be a refusal (a 405 only a missing endpoint); the body is not parsed otherwise.
  if (status !== 400 && status !== 404 && status !== 405) return undefined;
  const missing = (): UpstreamErrorMeaning | undefined =>
    routeMissing(status, bodyText)
      ? { kind: 'endpoint_missing', message: `${status} ${bodyText.trim().replace(/\s+/g, ' ').slice(0, 120) || '(empty body)'}` }
      : undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return missing();
  }
  return (status === 405 ? undefined : refusalInAnyDialect(status, body)) ?? missing();
}

/**
 * The OpenAI-shaped `error.code` of an answer, when it is a short token (`no_healthy_node`,
 * `replayed`): what this site may repeat of another site's refusal. Anything else is left out.
 */
export function errorCodeOf(bodyText: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const error = typeof body === 'object' && body !== null ? (body as { error?: unknown }).error : undefined;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[a-z][a-z0-9_]{0,63}$/.test(code) ? code : undefined;
}
