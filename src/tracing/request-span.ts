// Tracing's contribution to the request plane ([tracing]; the seam: proxy/feature/request-feature.ts):
// each request's span opens as the request has its id, its parent the client's (or the forwarding
// site's) W3C trace context; it watches the request's routing and attempts (the report's observer),
// and ends as the request is reported (a finished hook). Off, there is no tracer, this feature is
// absent, and no request opens anything.

import type { RequestTracer } from '#src/core/tracing.ts';
import { FORWARDED_FROM } from '#src/core/forwarded-from.ts';
import { fieldOf } from '#src/core/request-fields.ts';
import { whenFinished, type RequestFeature } from '#src/proxy/index.ts';

export function tracingFeature(tracer: RequestTracer): RequestFeature {
  return {
    started: ({ endpoint, req, caller, report }) => {
      const span = tracer.request({
        method: req.method ?? 'POST',
        endpoint,
        traceparent: req.headers.traceparent,
        tracestate: req.headers.tracestate,
        fromSite: fieldOf(caller.labels.fields, FORWARDED_FROM)?.site,
        requestId: report.requestId,
      });
      report.observer = span;
      whenFinished(report, (status, node, extra) =>
        span.end({
          status,
          target: node,
          requestedModel: report.requestedModel,
          model: report.model,
          tenant: report.labels?.tenant,
          refusal: report.refusal,
          error: extra?.brokenError,
          inputTokens: report.usage?.promptTokens,
          outputTokens: report.usage?.completionTokens,
          attempts: report.attempts.length,
        }),
      );
    },
  };
}
