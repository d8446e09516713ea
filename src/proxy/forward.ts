// One upstream attempt: send the buffered body to a node and stream its answer to the client as it
// arrives. Before anything reaches the client a failure is reported for failover; after that the
// response is ended (SSE: a clean end with no invented [DONE]; JSON: the socket is closed).

import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Clock } from '#src/core/clock.ts';
import { classify, type AttemptResult } from './attempt-result.ts';
import type { HeldBytesBudget, HeldReservation } from './held-budget.ts';
import { holdBody, parsesAsJson } from './held-body.ts';
import { decodedBody } from './decode.ts';
import { clientResponseHeaders } from './hop-headers.ts';
import { pump } from './pump.ts';
import { bodyCoding, planResponse } from './response-policy.ts';
import { interpretUpstreamError, type UpstreamErrorMeaning } from './upstream-error.ts';

/** Largest upstream error body read to recognise it (errors are small; anything bigger passes through). */
const MAX_INSPECTED_ERROR_BYTES = 64 * 1024;
const UNBUDGETED: HeldReservation = Object.freeze({ take: () => true, release: () => {} });

export type AttemptOutcome =
  /** The answer (any status) reached the client completely. */
  | { readonly kind: 'delivered'; readonly status: number; readonly firstByteMs: number | undefined }
  /** Nothing reached the client; another node may be tried. */
  | {
      readonly kind: 'failed';
      readonly result: AttemptResult;
      readonly error: string;
      readonly status?: number;
      /** Set when the node refused with a recognised error (overflow, unknown model). */
      readonly meaning?: UpstreamErrorMeaning;
    }
  /** Headers went out, then the upstream failed; the client response was ended. */
  | { readonly kind: 'broken'; readonly status: number; readonly error: string; readonly firstByteMs: number | undefined }
  /** The client went away; the upstream request was aborted. */
  | { readonly kind: 'client_gone'; readonly status: number | undefined };

export interface AttemptInput {
  readonly pool: Dispatcher;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly res: ServerResponse;
  readonly nodeName: string;
  readonly extraResponseHeaders: Readonly<Record<string, string>>;
  /** Asked when the node answers 5xx: true means hide it and fail over, false means pass it on. */
  readonly canFailOver: () => boolean;
  readonly monotonicMs: () => number;
  readonly startedMs: number;
  /** Bound on the whole exchange, streaming included; 0 = none. */
  readonly totalTimeoutMs: number;
  /** Schedules the total-timeout timer. */
  readonly clock: Clock;
  /**
   * Largest whole (non-SSE) JSON answer held back until it is complete and parses, so that a node
   * answering garbage or breaking off mid-body can still be failed over. Such answers arrive all at
   * once after generation, so holding them costs no latency; bigger ones stream through unchecked.
   */
  readonly maxHeldBodyBytes: number;
  /** Shared by all requests: what cannot be reserved from it streams through unchecked. */
  readonly heldBudget: HeldBytesBudget;
}

export async function forwardAttempt(input: AttemptInput): Promise<AttemptOutcome> {
  const { res } = input;
  const controller = new AbortController();
  // The response's close (not the request's: that fires once the body is read) means the client left.
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort(new Error('client closed the connection'));
  };
  res.on('close', onClose);
  // A plain timer, cleared when the attempt ends: AbortSignal.timeout() would keep a timer (an hour
  // by default) and its weak references alive per request until GC and finalisation catch up.
  const overall = { aborted: false };
  const overallTimer =
    input.totalTimeoutMs > 0
      ? input.clock.setTimeout(() => {
          overall.aborted = true;
          controller.abort(new Error(`upstream exchange exceeded ${input.totalTimeoutMs}ms`));
        }, input.totalTimeoutMs)
      : undefined;
  let upstream: Dispatcher.ResponseData | undefined;
  const reservation = input.heldBudget.open();
  // Held bytes handed to the response stay in memory until they are sent, not merely written.
  let heldBytesWritten = false;
  try {
    if (res.destroyed) return { kind: 'client_gone', status: undefined };
    try {
      upstream = await input.pool.request({
        path: input.path,
        method: 'POST',
        headers: input.headers,
        body: input.body,
        signal: controller.signal,
      });
    } catch (error) {
      if (overall.aborted) return { kind: 'failed', result: 'timeout', error: `no answer within ${input.totalTimeoutMs}ms` };
      if (controller.signal.aborted) return { kind: 'client_gone', status: undefined };
      return { kind: 'failed', ...classify(error) };
    }
    // Destroying an undici body emits 'error'; this keeps a late one from becoming an uncaught exception.
    upstream.body.on('error', ignoreError);
    const status = upstream.statusCode;
    const headers = clientResponseHeaders(upstream.headers);
    const coding = bodyCoding(upstream.headers['content-encoding']);
    const plan = planResponse({ status, contentType: String(headers['content-type'] ?? ''), coding, canFailOver: input.canFailOver });
    if (plan.kind === 'fail') {
      upstream.body.destroy();
      return { kind: 'failed', result: plan.result, error: plan.error, status };
    }
    if (res.destroyed) {
      upstream.body.destroy();
      return { kind: 'client_gone', status };
    }
    const isEventStream = plan.kind === 'stream' && plan.eventStream;
    // Compressed although asked for identity: the client gets the decoded bytes (unknown codings pass as they are).
    const body = decodedBody(upstream.body, coding);
    if (body !== upstream.body) delete headers['content-encoding'];
    let head: Buffer | undefined;
    if (plan.kind === 'inspect_error' || plan.kind === 'hold_json') {
      // An error body is read to recognise it; a bigger one (vLLM echoes the input) is the node's
      // own answer, passed on uninspected.
      // Error bodies stay outside the shared budget: they are small and fixed-bound, and an overflow
      // refusal left unrecognised under memory pressure would reach the client instead of failing over.
      const held =
        plan.kind === 'inspect_error'
          ? await holdBody(body, MAX_INSPECTED_ERROR_BYTES, UNBUDGETED)
          : await holdBody(body, input.maxHeldBodyBytes, reservation);
      if (held.kind === 'failed') {
        if (controller.signal.aborted && !overall.aborted) return { kind: 'client_gone', status };
        if (overall.aborted) return { kind: 'failed', result: 'timeout', error: `no whole answer within ${input.totalTimeoutMs}ms`, status };
        const cause = classify(held.error);
        return { kind: 'failed', result: cause.result, error: `the node's ${status} answer broke off: ${cause.error}`, status };
      }
      if (held.kind === 'complete') {
        if (plan.kind === 'inspect_error') {
          const meaning = interpretUpstreamError(status, held.bytes.toString('utf8'));
          if (meaning !== undefined) return { kind: 'failed', result: meaning.kind, error: meaning.message, status, meaning };
        } else if (!parsesAsJson(held.bytes)) {
          return { kind: 'failed', result: 'invalid_body', error: `node answered ${status} with a body that is not valid JSON`, status };
        }
        if (res.destroyed) return { kind: 'client_gone', status };
        delete headers['content-length'];
        res.writeHead(status, { ...headers, 'content-length': String(held.bytes.length), ...input.extraResponseHeaders });
        heldBytesWritten = true;
        res.end(held.bytes);
        return { kind: 'delivered', status, firstByteMs: input.monotonicMs() - input.startedMs };
      }
      head = held.head;
    }
    // A pumped answer may break off short of a declared length; sent chunked, its end is explicit
    // (an SSE stream then ends cleanly instead of leaving the client waiting for missing bytes).
    delete headers['content-length'];
    res.writeHead(status, { ...headers, ...input.extraResponseHeaders });
    if (head !== undefined) {
      heldBytesWritten = true;
      res.write(head);
    }
    const pumping = pump(body, res, input.monotonicMs);
    // holdBody paused a body it stopped reading; a new 'data' listener does not restart it.
    if (head !== undefined) body.resume();
    const pumped = await pumping;
    const firstByteMs = pumped.firstByteAt === undefined ? undefined : pumped.firstByteAt - input.startedMs;
    if (pumped.ok) return { kind: 'delivered', status, firstByteMs };
    if (pumped.clientGone || (controller.signal.aborted && !overall.aborted)) return { kind: 'client_gone', status };
    if (isEventStream) res.end();
    else res.destroy();
    return { kind: 'broken', status, error: pumped.error, firstByteMs };
  } catch (error) {
    // Anything that throws between sending and pumping (a header node:http refuses, a bug) must
    // not leave the node generating for nobody.
    controller.abort(error);
    upstream?.body.destroy();
    throw error;
  } finally {
    res.off('close', onClose);
    overallTimer?.cancel();
    if (heldBytesWritten && !res.closed) res.once('close', reservation.release);
    else reservation.release();
  }
}

function ignoreError(): void {}
