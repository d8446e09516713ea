// The translation feature's control-plane half, wiring only ([routing] translate, on by default;
// its request half is src/proxy/translate/, given by the request plane's list): what a translated
// request's own field says in the request log and the metrics, and its part of /admin/explain
// (translation-reports.ts). It holds no background work.

import type { Registry } from 'prom-client';
import type { BoundCounter } from '#src/core/bound-series.ts';
import type { ExplainAsk, ExplainPart, Feature } from '#src/core/feature.ts';
import type { FeatureReports } from '#src/core/request-fields.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { explainTranslation, translatedCounter, translationReports, type ChooseTranslation } from './translation-reports.ts';

export interface TranslationFeatureDeps {
  /** Whether the config in force translates ([routing] translate). */
  readonly on: () => boolean;
  /** The request path's choice over the fleet now. */
  readonly choose: ChooseTranslation;
}

export class TranslationFeature implements Feature<GatewayConfig> {
  readonly name = 'translation';
  readonly reports: FeatureReports;
  readonly #deps: TranslationFeatureDeps;
  #counter: BoundCounter<'translation' | 'status'> | undefined;

  constructor(deps: TranslationFeatureDeps) {
    this.#deps = deps;
    this.reports = translationReports((translation, status) => this.#counter?.inc(1, translation, status));
  }

  metrics(registry: Registry): void {
    this.#counter = translatedCounter(registry);
  }

  explain(ask: ExplainAsk): ExplainPart | undefined {
    return explainTranslation(ask, this.#deps.on(), this.#deps.choose);
  }

  start(): void {}

  stop(): void {}
}
