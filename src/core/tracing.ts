// The request path's one tracing port (docs/observability.md, "Tracing"): a request span, its
// routing decisions and queue waits, and one span per attempt whose trace context goes on to the
// node or site. The request code sees only these interfaces; the OpenTelemetry implementation is
// in src/tracing/, loaded only with `[tracing]`. Plain data in, nothing OpenTelemetry out. Off, there is no
// tracer and no span: every hook in the request path is one `undefined` check (`span?.end(…)`
// evaluates nothing), so tracing costs nothing when it is not configured.

/** How a request starts, as its span reads it. */
export interface RequestSpanStart {
  readonly method: string;
  readonly endpoint: string;
  /** The client's (or the forwarding site's) W3C trace context headers, as received. */
  readonly traceparent: string | string[] | undefined;
  readonly tracestate: string | string[] | undefined;
  /** A forward from a pinned site (its signature verified): its sampling decision is followed. */
  readonly fromSite: string | undefined;
  readonly requestId: string;
}

/** One routing decision: what was chosen and why, or why nothing was. */
export interface RouteNote {
  /** `node`: the scheduler's admission; `site`: the choice among remote sites. */
  readonly among: 'node' | 'site';
  /** The node's name or the site's id; undefined = none chosen. */
  readonly chosen: string | undefined;
  /** The policy that chose (least-loaded, cache-aware, …) or `site` for a site. */
  readonly policy: string | undefined;
  /** Why it was chosen, or the refusal's reason. */
  readonly reason: string;
  /** Time spent in the model's queue during this decision (0 = none). */
  readonly waitedMs: number;
}

/** The target of one attempt. */
export interface AttemptNote {
  readonly kind: 'node' | 'site';
  /** The node's name or the site's id. */
  readonly name: string;
  /** The node's or site's URL (server.address and server.port); undefined = not known. */
  readonly url: string | undefined;
  /** 1 for the first attempt of the request, 2 for the first failover, … */
  readonly index: number;
}

/** How one attempt ended. */
export interface AttemptEndNote {
  /** The attempt's result as `proxy:attempt` names it (success, http_5xx, connect_error, …). */
  readonly outcome: string;
  readonly status: number | undefined;
  readonly error: string | undefined;
  /** Whether the request goes on to another target after this attempt. */
  readonly failedOver: boolean;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
}

/** How the request ended. */
export interface RequestEndNote {
  readonly status: number;
  /** The node's name or `site:<id>` that answered. */
  readonly target: string | undefined;
  readonly requestedModel: string;
  readonly model: string;
  readonly tenant: string | undefined;
  /** The gateway's own refusal code, or a stream broken after its first byte. */
  readonly refusal: string | undefined;
  readonly error: string | undefined;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly attempts: number;
}

export interface RoutingSpan {
  end(note: RouteNote): void;
}

export interface AttemptSpan {
  /** The trace context to send on with this attempt (`traceparent`, `tracestate`); undefined = send the client's as it came. */
  readonly headers: Readonly<Record<string, string>> | undefined;
  end(note: AttemptEndNote): void;
}

export interface RequestSpan {
  /** The model the client named and the one it resolved to (gen_ai.request.model), once the body is read. */
  resolved(requestedModel: string, model: string): void;
  /** Called before a routing decision is asked for; the decision's `end` closes it. */
  routing(): RoutingSpan;
  /** Called once the attempt's call is prepared, before it is sent. */
  attempt(note: AttemptNote): AttemptSpan;
  /** Called once, when the request's report finishes. */
  end(note: RequestEndNote): void;
}

/** The span figures, read at scrape time. */
export interface SpanFigures {
  /** Spans the collector accepted. */
  readonly exported: number;
  /** Spans dropped because the export queue was full (an unreachable or slow collector). */
  readonly dropped: number;
  /** Spans in batches the collector refused or that timed out. */
  readonly failed: number;
}

/** Every host's span figures summed; undefined = no host traces. */
export function sumSpanFigures(all: readonly SpanFigures[]): SpanFigures | undefined {
  let sum: SpanFigures | undefined;
  for (const spans of all)
    sum = {
      exported: (sum?.exported ?? 0) + spans.exported,
      dropped: (sum?.dropped ?? 0) + spans.dropped,
      failed: (sum?.failed ?? 0) + spans.failed,
    };
  return sum;
}

export interface RequestTracer {
  request(start: RequestSpanStart): RequestSpan;
  figures(): SpanFigures;
  /** Exports what is queued, within `timeoutMs`; never throws, never waits longer. */
  shutdown(timeoutMs: number): Promise<void>;
}
