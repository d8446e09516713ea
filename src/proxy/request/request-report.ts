// One inference request's report: the id it goes by, what it has got to so far, and its report
// (`proxy:request-finished`) exactly once, however it ends: answered, refused, cut short, or thrown
// out by an internal error. The request id is the client's `x-request-id` when it is well-formed
// and bounded, else one the gateway makes. The same id goes to the node (or the next site) and back
// to the client, and names the request in the request log, so a client's own id can be followed
// end to end (request-id.ts merged here).

import { randomFillSync } from 'node:crypto';
import type { Clock } from '#src/core/clock.ts';
import type { EventBus } from '#src/core/events.ts';
import type { AttemptNote, AttemptSpan, RoutingSpan } from '#src/core/tracing.ts';
import { withField, type FieldKey, type RequestFields } from '#src/core/request-fields.ts';
import type { AnswerUsage } from '../attempt/answer-usage.ts';
import type { ProxyEvents } from './proxy-events.ts';
import { MAX_ATTEMPT_RECORDS, type AttemptRecord } from './attempt-record.ts';
import type { LoggedPrompt } from './logged-prompt.ts';

/** Longest model name kept for the request log (a client may name anything). */
const MAX_LOGGED_MODEL = 256;

// ---- The request id --------------------------------------------------------------------------

/** Longest client id accepted (a UUID is 36; a W3C trace id 32). */
export const MAX_REQUEST_ID_LENGTH = 128;

/** Visible ASCII without quotes, backslashes or separators a log reader or header parser could trip on. */
const WELL_FORMED = /^[A-Za-z0-9._:+=/@-]+$/;

/** The client's id when it is one well-formed, bounded value; undefined = make one. */
export function clientRequestId(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  if (header.length === 0 || header.length > MAX_REQUEST_ID_LENGTH) return undefined;
  return WELL_FORMED.test(header) ? header : undefined;
}

/** The id this request goes by: the client's (if well-formed), else a new one. */
export function requestIdFor(header: string | string[] | undefined, make: () => string): string {
  return clientRequestId(header) ?? make();
}

/** Ids one random fill makes (crypto.randomUUID's own batch). */
const IDS_PER_FILL = 128;
const UUID_CHARS = 36;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

/**
 * The maker of the ids the gateway gives (one per plane): random UUIDs (version 4), as
 * crypto.randomUUID makes them, from one random fill of IDS_PER_FILL ids at a time, written out as
 * one string; each id is a slice of it. (crypto.randomUUID joins twenty strings for each id: the
 * heaviest allocation of a request's report.)
 */
export function newRequestIds(): () => string {
  const random = Buffer.alloc(16 * IDS_PER_FILL);
  const text = Buffer.alloc(UUID_CHARS * IDS_PER_FILL);
  let written = '';
  let next = IDS_PER_FILL;
  return () => {
    if (next === IDS_PER_FILL) {
      written = uuidText(randomFillSync(random), text);
      next = 0;
    }
    const at = next * UUID_CHARS;
    next += 1;
    return written.slice(at, at + UUID_CHARS);
  };
}

/** Every 16 bytes of `random` as a UUID's text (its version 4 and variant bits set), one after the other. */
function uuidText(random: Buffer, text: Buffer): string {
  let at = 0;
  for (let i = 0; i < random.length; i += 1) {
    const n = i % 16;
    // The version nibble (4) and the variant's bits (10): RFC 9562 §5.4.
    const byte =
      n === 6 ? ((random[i] as number) & 0x0f) | 0x40 : n === 8 ? ((random[i] as number) & 0x3f) | 0x80 : (random[i] as number);
    if (n === 4 || n === 6 || n === 8 || n === 10) text[at++] = DASH;
    text[at++] = HEX_DIGITS[byte >> 4] as number;
    text[at++] = HEX_DIGITS[byte & 0x0f] as number;
  }
  return text.toString('latin1', 0, at);
}

// ---- The report ------------------------------------------------------------------------------

/** The stream's token timing (stream-timing.ts), carried to the report's detail. */
export interface TokenTiming {
  readonly firstTokenMs?: number | undefined;
  readonly interTokenMs?: number | undefined;
}

type Finished = ProxyEvents['proxy:request-finished'];
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What the answer reports beyond the request's own figures (failover's AnswerFigures; a refusal's client abort). */
export type FinishFigures = Partial<Pick<Finished, 'firstByteMs' | 'brokenError' | 'clientAborted' | 'usage'>> & TokenTiming;

export type Finish = (node: string | undefined, status: number, extra?: FinishFigures) => void;

/** Runs once as the request ends, before it is reported: what a feature does then (settle a reservation, end a span). */
export type FinishHook = (status: number, node: string | undefined, extra: FinishFigures | undefined) => void;

/**
 * What the request is reported under, as its caller says: its tenant, and the features' own fields
 * of every request of the caller (a forward's sender, under the mesh's name); absent stays absent.
 */
export interface RequestLabels {
  readonly tenant?: string | undefined;
  readonly fields?: RequestFields | undefined;
}

/**
 * Watches a request as it goes (a feature's: a span); undefined = nothing watches: told the model
 * resolved, asked before each routing decision, and for each attempt (its context sent on).
 */
export interface RequestObserver {
  resolved(requestedModel: string, model: string): void;
  routing(): RoutingSpan;
  attempt(note: AttemptNote): AttemptSpan;
}

/** What one request has got to so far; `finish` reports it once (later calls do nothing). */
export interface RequestReport {
  /** When the request arrived (monotonic ms). */
  readonly startedMs: number;
  /** The model as resolved from the body ('' until then). */
  model: string;
  /** The node of the attempt in progress, if any. */
  node: string | undefined;
  /** The tokens the delivered (or cut-short) answer used, once known. */
  usage: AnswerUsage | undefined;
  /** What the request is reported under (its caller's labels); undefined = nothing beyond its figures. */
  labels: RequestLabels | undefined;
  /** The features' hooks, run once in the order added as the request ends, before it is reported (whenFinished). */
  onFinish: FinishHook | undefined;
  /** The request log's particulars, filled in as the request goes (RequestDetail). */
  requestId: string;
  requestedModel: string;
  /** The attempts kept so far (noteAttempt): none shared until the first makes a list of one. */
  attempts: readonly AttemptRecord[];
  queueWaitMs: number;
  bytesIn: number;
  refusal: string | undefined;
  /** What watches the request's routing and attempts (a feature's); undefined = nothing. */
  observer: RequestObserver | undefined;
  /** `[log] bodies = true`: the prompt's text for the line. */
  prompt: LoggedPrompt | undefined;
  /** Each feature's own fields of the request, under its name (setField; core/request-fields.ts); undefined = none. */
  fields: RequestFields | undefined;
  /** Reports the request, once: a method of the report, never passed on detached. */
  finish(node: string | undefined, status: number, extra?: FinishFigures): void;
}

/** Adds a hook run as the request ends, after those added before it. */
export function whenFinished(report: RequestReport, hook: FinishHook): void {
  const before = report.onFinish;
  report.onFinish =
    before === undefined
      ? hook
      : (status, node, extra) => {
          before(status, node, extra);
          hook(status, node, extra);
        };
}

/** A feature sets its own fields of the request (under its key's name), reported with it. */
export function setField<T>(report: RequestReport, key: FieldKey<T>, value: T): void {
  report.fields = withField(report.fields, key, value);
}

/** A feature's own fields of the request, several at once (a ServedAs's), laid over those set before. */
export function setFields(report: RequestReport, fields: RequestFields): void {
  report.fields = report.fields === undefined ? fields : { ...report.fields, ...fields };
}

/** Keeps one more attempt (the first MAX_ATTEMPT_RECORDS). */
export function noteAttempt(report: RequestReport, record: AttemptRecord): void {
  // The first makes a list of one: an empty list's first push reserves seventeen slots (core/appended.ts).
  const attempts = report.attempts;
  if (attempts.length === 0) report.attempts = [record];
  else if (attempts.length < MAX_ATTEMPT_RECORDS) report.attempts = [...attempts, record];
}

export interface ReportDeps {
  readonly clock: Clock;
  readonly events: EventBus<ProxyEvents>;
  readonly modelLabel: (model: string) => string;
}

/** No attempt yet: shared (the first attempt makes the request's own list, see noteAttempt). */
const NO_ATTEMPTS: readonly AttemptRecord[] = Object.freeze([]);

/**
 * `socket`: the client's connection. The bytes written to the client are what it wrote from now
 * until the request is reported (head and body).
 */
export function startRequestReport(
  deps: ReportDeps,
  endpoint: string,
  startedMs: number,
  socket: { readonly bytesWritten: number },
): RequestReport {
  return new StartedReport(deps, endpoint, startedMs, socket);
}

/** A request's report: its fields, filled in as it goes, and `finish` a method (no closure per request). */
class StartedReport implements RequestReport {
  readonly startedMs: number;
  model: string;
  node: string | undefined;
  usage: AnswerUsage | undefined;
  labels: RequestLabels | undefined;
  onFinish: FinishHook | undefined;
  requestId: string;
  requestedModel: string;
  attempts: readonly AttemptRecord[];
  queueWaitMs: number;
  bytesIn: number;
  refusal: string | undefined;
  observer: RequestObserver | undefined;
  prompt: LoggedPrompt | undefined;
  fields: RequestFields | undefined;
  readonly #deps: ReportDeps;
  readonly #endpoint: string;
  readonly #socket: { readonly bytesWritten: number };
  readonly #writtenBefore: number;
  #finished: boolean;

  constructor(deps: ReportDeps, endpoint: string, startedMs: number, socket: { readonly bytesWritten: number }) {
    this.startedMs = startedMs;
    this.model = '';
    this.node = undefined;
    this.usage = undefined;
    this.labels = undefined;
    this.onFinish = undefined;
    this.requestId = '';
    this.requestedModel = '';
    this.attempts = NO_ATTEMPTS;
    this.queueWaitMs = 0;
    this.bytesIn = 0;
    this.refusal = undefined;
    this.observer = undefined;
    this.prompt = undefined;
    this.fields = undefined;
    this.#deps = deps;
    this.#endpoint = endpoint;
    this.#socket = socket;
    this.#writtenBefore = socket.bytesWritten;
    this.#finished = false;
  }

  // One event object and one detail, built in place: every request runs this.
  finish(node: string | undefined, status: number, extra?: FinishFigures): void {
    if (this.#finished) return;
    this.#finished = true;
    const deps = this.#deps;
    // What the answer used, as the attempt that answered read it (usage-reader.ts), kept on the report
    // before the features' hooks read it.
    this.usage ??= extra?.usage;
    this.onFinish?.(status, node, extra);
    const detail: Mutable<NonNullable<Finished['detail']>> = {
      requestId: this.requestId,
      endedAt: deps.clock.now(),
      requestedModel: this.requestedModel.slice(0, MAX_LOGGED_MODEL),
      servedModel: this.model.slice(0, MAX_LOGGED_MODEL),
      attempts: this.attempts,
      queueWaitMs: this.queueWaitMs,
      bytesIn: this.bytesIn,
      bytesOut: Math.max(0, this.#socket.bytesWritten - this.#writtenBefore),
      refusal: this.refusal,
      firstTokenMs: extra?.firstTokenMs,
      interTokenMs: extra?.interTokenMs,
    };
    if (this.prompt !== undefined) detail.prompt = this.prompt;
    const event: Mutable<Finished> = {
      endpoint: this.#endpoint,
      model: deps.modelLabel(this.model),
      node,
      status,
      durationMs: deps.clock.monotonicMs() - this.startedMs,
      firstByteMs: extra?.firstByteMs,
      brokenError: extra?.brokenError,
      clientAborted: extra?.clientAborted ?? false,
      usage: this.usage,
      detail,
    };
    // Absent, not undefined, when unset (as the event has always been).
    const labels = this.labels;
    if (labels?.tenant !== undefined) event.tenant = labels.tenant;
    const fields =
      labels?.fields === undefined
        ? this.fields
        : this.fields === undefined
          ? labels.fields
          : { ...labels.fields, ...this.fields };
    if (fields !== undefined) event.fields = fields;
    deps.events.emit('proxy:request-finished', event);
  }
}
