// Which traces are recorded. A span whose parent is in this process follows it (a request's spans
// are all kept or all not). A request's span: a forward from a pinned site follows the sending
// site's decision (the remote half of a trace is kept with the rest); any other — a new trace, or a
// client's traceparent — is kept for `sample_ratio` of trace ids (the SDK's ratio sampler, by trace
// id, so two sites with one ratio agree): a client's sampled flag cannot make every request traced.

import { trace, type Attributes, type Context } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler, type Sampler, type SamplingResult } from '@opentelemetry/sdk-trace';
import { ATTR } from './span-attributes.ts';

const SAMPLED = 1;

export class RequestSampler implements Sampler {
  readonly #ratio: TraceIdRatioBasedSampler;
  readonly #text: string;

  constructor(ratio: number) {
    this.#ratio = new TraceIdRatioBasedSampler(ratio);
    this.#text = `RequestSampler{ratio=${ratio}}`;
  }

  shouldSample(context: Context, traceId: string, _name: string, _kind: unknown, attributes: Attributes): SamplingResult {
    const parent = trace.getSpanContext(context);
    if (parent !== undefined && (parent.isRemote !== true || attributes[ATTR.fromSite] !== undefined)) {
      return {
        decision: (parent.traceFlags & SAMPLED) === SAMPLED ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD,
      };
    }
    return this.#ratio.shouldSample(context, traceId);
  }

  toString(): string {
    return this.#text;
  }
}
