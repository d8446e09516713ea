// The translation feature ([routing] translate, on by default): a client speaking an API no node
// for its model speaks (Anthropic Messages to a fleet of Chat Completions servers) is served over
// one they do, through the list of translations (src/translate/translations.ts). It contributes one
// hook per translated client endpoint (request-feature.ts): a request to any other endpoint runs
// nothing of it. The decision reads routing's node-endpoints judgement (translation-choice.ts);
// the answer is rewritten by the attempt (translated-answer.ts).

import type { Clock } from '#src/core/clock.ts';
import type { InferenceEndpoint } from '#src/config/index.ts';
import type { FleetView } from '#src/ports/index.ts';
import type { Translation } from '#src/translate/translation.ts';
import type { EndpointTranslation, RequestFeature } from '../feature/request-feature.ts';
import { translationFor } from './translation-choice.ts';
import { servedAs } from './translated-request.ts';

export interface TranslateDeps {
  readonly fleet: Pick<FleetView, 'views'>;
  readonly clock: Pick<Clock, 'now'>;
}

export function translateFeature(deps: TranslateDeps, translations: readonly Translation[]): RequestFeature {
  const byClient = new Map<InferenceEndpoint, Translation[]>();
  for (const translation of translations)
    byClient.set(translation.client, [...(byClient.get(translation.client) ?? []), translation]);
  const hooks: Partial<Record<InferenceEndpoint, EndpointTranslation>> = Object.create(null) as object;
  for (const [client, candidates] of byClient) hooks[client] = endpointTranslation(deps, client, candidates);
  return { translations: Object.freeze(hooks) };
}

function endpointTranslation(
  deps: TranslateDeps,
  client: InferenceEndpoint,
  candidates: readonly Translation[],
): EndpointTranslation {
  return (ask) => {
    const chosen = translationFor(candidates, client, ask.resolved.model, deps.fleet.views(), ask.lacking);
    return chosen === undefined ? undefined : servedAs(chosen, ask, Math.floor(deps.clock.now() / 1000));
  };
}
