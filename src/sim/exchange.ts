// The seam between the HTTP shell and a kind: one request as plain data plus a writer, and the
// interface every kind implements.

import type { ResidencyStats } from '#src/sim/recorder.ts';
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import type { Reply } from '#src/sim/reply.ts';
import type { RequestBody } from '#src/sim/request-body.ts';
import type { ResponseWriter } from '#src/sim/response-writer.ts';
import type { ResolvedNode } from '#src/sim/spec.ts';

/**
 * Which fault switch governs an endpoint; `events`: a long-lived event stream (a router's
 * `/models/sse`), recorded but never counted in flight (stats' `inFlight` counts answers under way).
 */
export type EndpointClass = 'inference' | 'models' | 'health' | 'other' | 'events';

export interface SimExchange {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  readonly body: RequestBody;
  readonly writer: ResponseWriter;
  /** Aborts when the connection closes before the response finished. */
  readonly signal: AbortSignal;
  /** Destroys the socket on purpose (a fault), without counting it as a client abort. */
  destroySocket(): void;
}

/** Answers a kind gives when a fault asks for a failure "in the kind's shape". */
export interface KindFaultReplies {
  /** A 500 in the kind's error body. */
  internalError(): Reply;
  /** A failing health answer (503). */
  healthFailure(): Reply;
  /** The kind's model list with no models. */
  emptyModels(): Reply;
}

export interface KindHandler {
  classify(method: string, path: string): EndpointClass;
  readonly faultReplies: KindFaultReplies;
  /** Answers one request; resolves when the answer has ended or the client left. */
  handle(exchange: SimExchange): Promise<void>;
  /** Ids the node lists in /v1/models now. */
  modelIds(): string[];
  /** Stops timers and drops in-flight generation. */
  close(): void;
  /** Residency figures, for kinds that load models at runtime. */
  residency?(): ResidencyStats;
  /** A test knob on the node's models (`POST /__sim/model`; the router's: crash, sleep…); absent = none. */
  control?(action: string, body: Readonly<Record<string, unknown>>): SimControlAnswer;
}

export type SimControlAnswer = { readonly ok: true; readonly detail?: string } | { readonly ok: false; readonly error: string };

/** Resolves when `signal` aborts (a hung request waits for its client to leave). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** What a kind is built from. */
export interface KindContext {
  readonly node: ResolvedNode;
  readonly clock: Clock;
  readonly random: () => number;
  /** Epoch seconds when the node started. */
  readonly startedAtSec: number;
  /** Called after the node's model residency changed (a load, an unload, a queue): its activity, for tests to wait on. */
  readonly residencyChanged?: () => void;
}
