// Pure: one request's line in the request log (docs/observability.md), from its
// `proxy:request-finished` event. Plain figures only: never a prompt, an answer or a key. Times are
// UTC ISO-8601, durations milliseconds (one decimal), sizes bytes; a field not known is left out.
// A feature's own fields of the request (core/request-fields.ts) are laid where the feature says,
// by the reports table the feature list gives: the line names no feature.

import { NO_REPORTS, withFeatureLines, type ReportsTable } from '#src/core/request-fields.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

type Finished = ProxyEvents['proxy:request-finished'];

/** Longest free text kept in a line (an error). */
const MAX_TEXT = 256;

export interface RequestLine {
  readonly time: string;
  readonly request_id: string;
  readonly tenant?: string;
  readonly endpoint: string;
  readonly model_requested?: string;
  readonly model?: string;
  readonly node?: string;
  readonly site?: string;
  readonly attempts: readonly LineAttempt[];
  readonly status: number;
  readonly refusal?: string;
  readonly error?: string;
  readonly client_aborted?: true;
  readonly queue_wait_ms: number;
  readonly first_byte_ms?: number;
  readonly first_token_ms?: number;
  readonly inter_token_ms?: number;
  readonly duration_ms: number;
  readonly prompt_tokens?: number;
  readonly completion_tokens?: number;
  readonly tokens_from?: 'usage' | 'seen' | 'estimated';
  /** With `tokens_from: "estimated"`: `decode_rate` (the node's learned speed) or `prompt` (none known: the prompt alone). */
  readonly estimated_from?: 'decode_rate' | 'prompt';
  readonly bytes_in: number;
  readonly bytes_out: number;
  /** `[log] bodies = true` only: the prompt's text (at most `bodies_max_bytes`), and whether it was cut. */
  readonly prompt?: string;
  readonly prompt_truncated?: true;
}

export interface LineAttempt {
  readonly node?: string;
  readonly site?: string;
  readonly outcome: string;
  readonly status?: number;
}

const ms = (value: number): number => Math.round(value * 10) / 10;
const text = (value: string): string => (value.length > MAX_TEXT ? value.slice(0, MAX_TEXT) : value);

/**
 * The line's object, with the features' fields of the request placed by their reports (`reports`:
 * asked only for a request that carries some); `requestLineText` gives its JSON text with the newline.
 */
export function requestLine(e: Finished, fallbackNowMs: number, reports: () => ReportsTable = noReports): RequestLine {
  const line = ownLine(e, fallbackNowMs);
  return e.fields === undefined ? line : withFeatureLines(line, e.fields, reports());
}

const noReports = (): ReportsTable => NO_REPORTS;

/** The line's own fields: every request's. */
function ownLine(e: Finished, fallbackNowMs: number): RequestLine {
  const d = e.detail;
  const attempts = (d?.attempts ?? []).map((a): LineAttempt => ({
    ...(a.kind === 'node' ? { node: a.target } : { site: a.target }),
    outcome: a.outcome,
    ...(a.status === undefined ? {} : { status: a.status }),
  }));
  const last = d?.attempts.at(-1);
  // The target that answered: the last attempt's, when the report names a target at all.
  const where =
    e.node === undefined || last === undefined ? undefined : last.kind === 'site' ? { site: last.target } : { node: last.target };
  const usage = e.usage;
  return {
    time: new Date(d?.endedAt ?? fallbackNowMs).toISOString(),
    request_id: d?.requestId ?? '',
    ...(e.tenant === undefined ? {} : { tenant: e.tenant }),
    endpoint: e.endpoint,
    ...(d === undefined || d.requestedModel === '' ? {} : { model_requested: d.requestedModel }),
    ...(d === undefined || d.servedModel === '' ? {} : { model: d.servedModel }),
    ...where,
    attempts,
    status: e.status,
    ...(d?.refusal === undefined ? {} : { refusal: d.refusal }),
    ...(e.brokenError === undefined ? {} : { error: text(e.brokenError) }),
    ...(e.clientAborted ? { client_aborted: true as const } : {}),
    queue_wait_ms: ms(d?.queueWaitMs ?? 0),
    ...(e.firstByteMs === undefined ? {} : { first_byte_ms: ms(e.firstByteMs) }),
    ...(d?.firstTokenMs === undefined ? {} : { first_token_ms: ms(d.firstTokenMs) }),
    ...(d?.interTokenMs === undefined ? {} : { inter_token_ms: ms(d.interTokenMs) }),
    duration_ms: ms(e.durationMs),
    ...(usage?.promptTokens === undefined ? {} : { prompt_tokens: usage.promptTokens }),
    ...(usage?.completionTokens === undefined ? {} : { completion_tokens: usage.completionTokens }),
    ...(usage === undefined || (usage.promptTokens === undefined && usage.completionTokens === undefined)
      ? {}
      : { tokens_from: usage.counted }),
    ...(usage?.basis === undefined ? {} : { estimated_from: usage.basis }),
    bytes_in: d?.bytesIn ?? 0,
    bytes_out: d?.bytesOut ?? 0,
    ...(d?.prompt === undefined
      ? {}
      : { prompt: d.prompt.text, ...(d.prompt.truncated ? { prompt_truncated: true as const } : {}) }),
  };
}

/** U+2028 and U+2029, which JSON leaves as they are but some line readers take for line ends. */
const LINE_SEPARATORS = /[\u2028\u2029]/;

/** One JSON line, newline-terminated: JSON.stringify escapes every control character, and the two separators are escaped too. */
export function requestLineText(e: Finished, fallbackNowMs: number, reports?: () => ReportsTable): string {
  const json = JSON.stringify(requestLine(e, fallbackNowMs, reports));
  const text = LINE_SEPARATORS.test(json) ? json.replaceAll('\u2028', '\\u2028').replaceAll('\u2029', '\\u2029') : json;
  return `${text}\n`;
}
