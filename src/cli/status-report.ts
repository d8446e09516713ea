// Reads GET /admin/hosts from a running gateway for `switchyard status`: one bounded request
// (time and bytes), the admin token as a bearer token, and a shape check before the table trusts it.

import type { HostsReport } from '#src/admin/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { isRecord } from '#src/core/is-record.ts';
import { httpRequester } from './http-requester.ts';

/** The whole exchange; a gateway slower than this counts as down. */
export const STATUS_TIMEOUT_MS = 5_000;
/** Largest hosts report read (a fleet of a few thousand nodes fits). */
export const STATUS_MAX_BYTES = 16 * 1024 * 1024;

/** What an admin answer that did not get through says (no answer, or the admin token refused); undefined = it got through. */
export function adminAnswerProblem(answer: JsonAnswer): string | undefined {
  if (!answer.ok) return answer.status === undefined ? answer.error : `HTTP ${answer.status}: ${answer.error}`;
  if (answer.status === 401 || answer.status === 403)
    return `HTTP ${answer.status}: the gateway refused the admin request (pass the admin token with --token or SWITCHYARD_ADMIN_TOKEN)`;
  return undefined;
}

export type HostsAnswer = { readonly ok: true; readonly report: HostsReport } | { readonly ok: false; readonly error: string };

export async function fetchHostsReport(gatewayUrl: string, token: string | undefined, signal: AbortSignal): Promise<HostsAnswer> {
  const answer = await requestBoundedJson(`${gatewayUrl.replace(/\/+$/, '')}/admin/hosts`, {
    dispatcher: httpRequester(STATUS_TIMEOUT_MS),
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    timeoutMs: STATUS_TIMEOUT_MS,
    maxBytes: STATUS_MAX_BYTES,
    signal,
  });
  const problem = adminAnswerProblem(answer);
  // A failed exchange always has a problem: the `!answer.ok` only narrows the answer for what follows.
  if (problem !== undefined || !answer.ok) return { ok: false, error: problem ?? 'no answer' };
  if (answer.status !== 200) {
    const said = gatewayErrorMessage(answer.body);
    return { ok: false, error: `HTTP ${answer.status} from /admin/hosts${said === undefined ? '' : `: ${said}`}` };
  }
  return isHostsReport(answer.body)
    ? { ok: true, report: answer.body }
    : { ok: false, error: '/admin/hosts did not answer a hosts report' };
}

/**
 * The message of the gateway's error answer (`{"error": {"message"}}`), e.g. why a Host is not
 * answered (421, naming `[admin] hosts`); undefined when the answer is not one.
 */
export function gatewayErrorMessage(body: unknown): string | undefined {
  return isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : undefined;
}

/** The fields the table reads, checked; anything else in the document is left alone. */
function isHostsReport(body: unknown): body is HostsReport {
  if (!isRecord(body) || !Array.isArray(body.hosts) || !isRecord(body.queue_depth)) return false;
  return body.hosts.every(
    (host: unknown) =>
      isRecord(host) &&
      typeof host.name === 'string' &&
      typeof host.kind === 'string' &&
      isRecord(host.health) &&
      typeof host.health.status === 'string' &&
      isRecord(host.discovery) &&
      typeof host.discovery.state === 'string' &&
      Array.isArray(host.loaded) &&
      Array.isArray(host.available_on_demand) &&
      isRecord(host.models) &&
      isRecord(host.leases),
  );
}
