// What a translated request reports (issue 39: a feature's own fields): the request feature
// (src/proxy/translate/) sets the translation's name on the request's report (translated-field.ts);
// from it come the request log's `translated` field (just after `endpoint`) and
// `gateway_translated_requests_total{translation,status}`; /admin/explain's `translated` says
// which translation a request for a model and endpoint would be served by. An untranslated request
// carries no such field and runs nothing of this.

import type { Registry } from 'prom-client';
import { BoundCounter } from '#src/core/bound-series.ts';
import type { ExplainAsk, ExplainPart } from '#src/core/feature.ts';
import { featureReports, type FeatureReports } from '#src/core/request-fields.ts';
import { TRANSLATION } from './translated-field.ts';
import { isInferenceEndpoint, type InferenceEndpoint } from '#src/config/index.ts';

/** `gateway_translated_requests_total`: translated requests by translation and HTTP status. */
export function translatedCounter(registry: Registry): BoundCounter<'translation' | 'status'> {
  return new BoundCounter({
    name: 'gateway_translated_requests_total',
    help: 'Requests served in another API than the client\'s (no node for the model speaks it: docs/protocols-endpoints.md, "Translation"), by translation (e.g. messages→chat) and HTTP status.',
    labelNames: ['translation', 'status'],
    registers: [registry],
  });
}

/** What a translated request's field says: `translated` in its log line, after `endpoint`; `count`ed by translation and status. */
export function translationReports(count: (translation: string, status: string) => void): FeatureReports {
  return featureReports({
    key: TRANSLATION,
    line: { place: { after: 'endpoint' }, fields: (name) => ({ translated: name }) },
    finished: (name, request) => count(name, String(request.status)),
  });
}

/** The translation a request on `endpoint` for `model` would be served by now (the request path's choice), by name and node endpoint. */
export type ChooseTranslation = (
  endpoint: InferenceEndpoint,
  model: string,
) => { readonly name: string; readonly node: InferenceEndpoint } | undefined;

/** /admin/explain's part: judged on the translation's node endpoint, and `translated` naming it; undefined = not translated. */
export function explainTranslation(ask: ExplainAsk, on: boolean, choose: ChooseTranslation): ExplainPart | undefined {
  if (!on || ask.endpoint === undefined || !isInferenceEndpoint(ask.endpoint)) return undefined;
  const chosen = choose(ask.endpoint, ask.model);
  if (chosen === undefined) return undefined;
  return { endpoint: chosen.node, fields: { translated: { translation: chosen.name, endpoint: chosen.node } } };
}
