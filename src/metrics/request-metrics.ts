// Per-request figures from `proxy:request-finished`: tokens by model, node and kind, a stream's
// time to first token and its inter-token latency, duration by endpoint and model (a feature's own series are its own:
// the request log's written and dropped lines, logs/request-log-metrics.ts; what a feature counts of its fields of a
// request, core/request-fields.ts). Labels are bounded: model labels (model-label.ts), node names and `site:<id>` of
// pinned sites, the inference endpoints, closed sets.

import type { Registry } from 'prom-client';
import { BoundCounter, BoundHistogram } from '#src/core/bound-series.ts';
import type { EventBus } from '#src/core/events.ts';
import type { ProxyEvents } from '#src/proxy/index.ts';

export function registerRequestMetrics(r: Registry, events: EventBus<ProxyEvents>): (() => void)[] {
  const tokens = new BoundCounter({
    name: 'gateway_tokens_total',
    help: 'Tokens of answered requests by model, node (or site:<id>) and kind (prompt, completion): the node\'s usage, those relayed on a stream cut short, or estimated (the prompt, and the generation at the node\'s learned speed) for a client that left before the answer (docs/tenants.md, "What is charged").',
    labelNames: ['model', 'node', 'kind'],
    registers: [r],
  });
  const firstToken = new BoundHistogram({
    name: 'gateway_time_to_first_token_seconds',
    help: 'Streams: time from request arrival to the first chunk carrying generated text sent to the client.',
    labelNames: ['model'],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [r],
  });
  const interToken = new BoundHistogram({
    name: 'gateway_inter_token_latency_seconds',
    help: 'Streams: the mean gap between generated tokens after the first, one observation per stream.',
    labelNames: ['model'],
    buckets: [0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.3, 0.6, 1.5],
    registers: [r],
  });
  const duration = new BoundHistogram({
    name: 'gateway_endpoint_request_duration_seconds',
    help: 'Time from request arrival to the end of the response, by endpoint and model.',
    labelNames: ['endpoint', 'model'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [r],
  });
  return [
    events.deferred('proxy:request-finished', (e) => {
      duration.observe(e.durationMs / 1000, e.endpoint, e.model);
      const node = e.node ?? 'none';
      const prompt = e.usage?.promptTokens;
      const completion = e.usage?.completionTokens;
      if (prompt !== undefined && prompt > 0) tokens.inc(prompt, e.model, node, 'prompt');
      if (completion !== undefined && completion > 0) tokens.inc(completion, e.model, node, 'completion');
      const first = e.detail?.firstTokenMs;
      if (first !== undefined) firstToken.observe(first / 1000, e.model);
      const gap = e.detail?.interTokenMs;
      if (gap !== undefined) interToken.observe(gap / 1000, e.model);
    }),
  ];
}
