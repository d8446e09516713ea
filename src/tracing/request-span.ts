// Tracing's contribution to the request plane ([tracing]; the seam: proxy/feature/request-feature.ts):
// each request's span opens as the request has its id, its parent the client's (or the forwarding
// site's) W3C trace context; the report ends it when the request is reported. Off, there is no
// tracer, this feature is absent, and no request opens anything.

import type { RequestTracer } from '#src/core/tracing.ts';
import type { RequestFeature } from '#src/proxy/index.ts';

export function tracingFeature(tracer: RequestTracer): RequestFeature {
  return {
    started: ({ endpoint, req, caller, report }) => {
      report.trace = tracer.request({
        method: req.method ?? 'POST',
        endpoint,
        traceparent: req.headers.traceparent,
        tracestate: req.headers.tracestate,
        fromSite: caller.fromSite,
        requestId: report.requestId,
      });
    },
  };
}
