// The fault suite's load generator: seeded, bounded in count and time, loopback only; and the
// classification of every outcome a client sees (ok, expected refusal, short stream, error...).

import { Agent, request } from 'undici';
import { seededRandom } from '#src/sim/seeded-random.ts';

/** A timeline of "some capable node is up"; starts up. Times are Date.now() ms. */
export class Availability {
  readonly #downSpans: { from: number; to: number }[] = [];
  #downSince: number | undefined;
  /** After a node comes back the gateway needs a health round to see it; errors then are not avoidable. */
  readonly #graceMs: number;

  constructor(graceMs = 0) {
    this.#graceMs = graceMs;
  }

  down(): void {
    this.#downSince ??= Date.now();
  }

  up(): void {
    if (this.#downSince === undefined) return;
    this.#downSpans.push({ from: this.#downSince, to: Date.now() + this.#graceMs });
    this.#downSince = undefined;
  }

  /** Whether a capable node was up (and known to be) for the whole of [from, to]. */
  upThroughout(from: number, to: number): boolean {
    if (this.#downSince !== undefined && this.#downSince <= to) return false;
    return this.#downSpans.every((span) => span.to < from || span.from > to);
  }
}

// One request and its outcome, as the client sees it.

export type OutcomeKind =
  /** 200 and a complete answer (JSON with choices, or an SSE stream ending in [DONE]). */
  | 'ok'
  /** The status the case expected (e.g. 400 for malformed JSON). */
  | 'expected'
  /** The client aborted on purpose. */
  | 'aborted'
  /** An SSE stream that ended cleanly but without [DONE]: a mid-stream fault, passed on as designed. */
  | 'short_stream'
  /** A JSON answer whose socket closed mid-body: a mid-body fault, passed on as designed. */
  | 'cut_body'
  /** An SSE stream whose socket broke instead of ending: the clean-end protection failed. */
  | 'stream_socket_error'
  /** 200 with a body that is not a complete answer. */
  | 'bad_body'
  /** A status the case did not expect. */
  | 'http_error'
  /** No response at all (connection refused, reset before headers). */
  | 'socket_error'
  /** No outcome within the per-request bound. */
  | 'timeout';

/** After the first byte, nothing the gateway can do: a fault there is visible but not avoidable. */
const AFTER_FIRST_BYTE: ReadonlySet<OutcomeKind> = new Set(['short_stream', 'cut_body']);
const NOT_ERRORS: ReadonlySet<OutcomeKind> = new Set(['ok', 'expected', 'aborted']);

export interface RequestSpec {
  readonly path: string;
  readonly payload: string | Buffer;
  readonly stream: boolean;
  readonly headers?: Readonly<Record<string, string>>;
  /** A status that counts as the right answer (e.g. 400 for malformed JSON); 200 is always right. */
  readonly expectStatus?: number;
  /** Abort the request this many ms after sending it. */
  readonly abortAfterMs?: number;
}

export interface RequestOutcome {
  readonly kind: OutcomeKind;
  readonly status: number | undefined;
  readonly node: string | undefined;
  readonly detail: string;
  readonly startedAt: number;
  readonly endedAt: number;
}

const REQUEST_BOUND_MS = 20_000;

export async function sendOne(dispatcher: Agent, baseUrl: string, spec: RequestSpec): Promise<RequestOutcome> {
  const startedAt = Date.now();
  const abort = new AbortController();
  const bound = setTimeout(() => abort.abort(new Error('request bound')), REQUEST_BOUND_MS);
  const userAbort =
    spec.abortAfterMs === undefined ? undefined : setTimeout(() => abort.abort(new Error('client abort')), spec.abortAfterMs);
  const done = (kind: OutcomeKind, status: number | undefined, node: string | undefined, detail: string): RequestOutcome => ({
    kind,
    status,
    node,
    detail,
    startedAt,
    endedAt: Date.now(),
  });
  const abortedKind = (): OutcomeKind =>
    String((abort.signal.reason as Error | undefined)?.message) === 'client abort' ? 'aborted' : 'timeout';
  try {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${baseUrl}${spec.path}`, {
        dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        body: spec.payload,
        signal: abort.signal,
      });
    } catch (error) {
      if (abort.signal.aborted) return done(abortedKind(), undefined, undefined, describe(error));
      return done('socket_error', undefined, undefined, describe(error));
    }
    const status = res.statusCode;
    const node = typeof res.headers['x-switchyard-node'] === 'string' ? res.headers['x-switchyard-node'] : undefined;
    const isSse = String(res.headers['content-type'] ?? '').includes('text/event-stream');
    let text: string;
    try {
      text = await res.body.text();
    } catch (error) {
      if (abort.signal.aborted) return done(abortedKind(), status, node, describe(error));
      if (status !== 200) return done('http_error', status, node, `${status}, body broke: ${describe(error)}`);
      return done(isSse ? 'stream_socket_error' : 'cut_body', status, node, describe(error));
    }
    if (status !== 200) {
      return done(status === spec.expectStatus ? 'expected' : 'http_error', status, node, `${status} ${text.slice(0, 400)}`);
    }
    if (spec.stream) {
      if (!isSse)
        return done('bad_body', status, node, `stream answered ${String(res.headers['content-type'])}: ${text.slice(0, 120)}`);
      if (/^data: \[DONE\]$/m.test(text)) return done('ok', status, node, '');
      return done('short_stream', status, node, text.slice(-120));
    }
    try {
      const json = JSON.parse(text) as { choices?: unknown; data?: unknown };
      if (Array.isArray(json.choices) || Array.isArray(json.data)) return done('ok', status, node, '');
      return done('bad_body', status, node, text.slice(0, 120));
    } catch {
      return done('bad_body', status, node, text.slice(0, 120));
    }
  } finally {
    clearTimeout(bound);
    if (userAbort !== undefined) clearTimeout(userAbort);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code === undefined ? error.message : `${code}: ${error.message}`;
  }
  return String(error);
}

// The load generator.

export interface LoadOptions {
  readonly url: string;
  /** Upper bound on requests sent. */
  readonly requests: number;
  readonly concurrency: number;
  readonly seed: number;
  /** Stop sending new requests after this long (bounded in time as well as count). */
  readonly maxDurationMs?: number;
  /** Each worker sends at most one request per this many ms (for time-based cases). */
  readonly paceMs?: number;
  /** The request for the i-th send; default: a chat completion for `model`, half of them streamed. */
  readonly spec?: (i: number, random: () => number) => RequestSpec;
  readonly model?: string;
  readonly availability?: Availability;
  /** Stops sending new requests once aborted. */
  readonly stopSignal?: AbortSignal;
  /** Called with each outcome as it lands (e.g. to react mid-load). */
  readonly onOutcome?: (outcome: RequestOutcome) => void;
}

export interface LoadTally {
  readonly sent: number;
  readonly byKind: Readonly<Partial<Record<OutcomeKind, number>>>;
  readonly clientErrors: number;
  readonly avoidable: number;
  readonly afterFirstByte: number;
  readonly expected: number;
  readonly byNode: Readonly<Record<string, number>>;
  readonly outcomes: readonly RequestOutcome[];
  /** A few examples of each error kind, for assertion messages. */
  readonly examples: readonly string[];
  readonly durationMs: number;
}

/** A chat completion body; `stream` requests get SSE. */
export function chatSpec(model: string, stream: boolean, extra: Readonly<Record<string, unknown>> = {}): RequestSpec {
  const body = { model, messages: [{ role: 'user', content: 'hello there, how are you' }], max_tokens: 8, stream, ...extra };
  return { path: '/v1/chat/completions', payload: JSON.stringify(body), stream };
}

export async function runLoad(options: LoadOptions): Promise<LoadTally> {
  const random = seededRandom(options.seed);
  const model = options.model ?? 'm';
  const makeSpec = options.spec ?? ((_i: number, r: () => number) => chatSpec(model, r() < 0.5));
  const dispatcher = new Agent({ connections: options.concurrency, keepAliveTimeout: 5_000 });
  const started = Date.now();
  const outcomes: RequestOutcome[] = [];
  let next = 0;
  const wantMore = (): boolean => {
    if (next >= options.requests || options.stopSignal?.aborted === true) return false;
    const elapsed = Date.now() - started;
    if (options.maxDurationMs !== undefined && elapsed > options.maxDurationMs) return false;
    return true;
  };
  const worker = async (): Promise<void> => {
    while (wantMore()) {
      const i = next++;
      const outcome = await sendOne(dispatcher, options.url, makeSpec(i, random));
      outcomes.push(outcome);
      options.onOutcome?.(outcome);
      if (options.paceMs !== undefined) await pause(Math.max(0, options.paceMs - (outcome.endedAt - outcome.startedAt)));
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    await dispatcher.destroy();
  }
  return tally(outcomes, options.availability, Date.now() - started);
}

export function tally(
  outcomes: readonly RequestOutcome[],
  availability: Availability | undefined,
  durationMs: number,
): LoadTally {
  const byKind: Partial<Record<OutcomeKind, number>> = {};
  const byNode: Record<string, number> = {};
  const examples: string[] = [];
  const shown = new Map<OutcomeKind, number>();
  let clientErrors = 0;
  let avoidable = 0;
  let afterFirstByte = 0;
  for (const o of outcomes) {
    byKind[o.kind] = (byKind[o.kind] ?? 0) + 1;
    if (o.node !== undefined) byNode[o.node] = (byNode[o.node] ?? 0) + 1;
    if (NOT_ERRORS.has(o.kind)) continue;
    clientErrors += 1;
    if (AFTER_FIRST_BYTE.has(o.kind)) afterFirstByte += 1;
    else if (availability === undefined || availability.upThroughout(o.startedAt, o.endedAt)) avoidable += 1;
    const count = shown.get(o.kind) ?? 0;
    if (count < 3) {
      shown.set(o.kind, count + 1);
      examples.push(`${o.kind} (node ${o.node ?? '-'}): ${o.detail}`);
    }
  }
  return {
    sent: outcomes.length,
    byKind,
    clientErrors,
    avoidable,
    afterFirstByte,
    expected: byKind.expected ?? 0,
    byNode,
    outcomes,
    examples,
    durationMs,
  };
}

export function summary(t: LoadTally): string {
  return `sent ${t.sent}, kinds ${JSON.stringify(t.byKind)}, by node ${JSON.stringify(t.byNode)}; ${t.examples.join(' | ')}`;
}

export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
