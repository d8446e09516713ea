// Pure: whether a request is translated, and by which translation. Never where a node for the
// model speaks the client's API natively (routing's node-endpoints judgement); else the first
// translation of the client's endpoint whose node API some node for the model speaks; else none
// (the request goes on as it came, and its refusal says why no node serves it).

import type { InferenceEndpoint } from '#src/config/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { modelSpeaks } from '#src/routing/index.ts';
import type { Translation } from '#src/translate/translation.ts';

/** `candidates`: translations in the list's order (those of other client endpoints are skipped); `speaks`: whether some node for the model serves an endpoint. */
export function chooseTranslation(
  client: InferenceEndpoint,
  candidates: readonly Translation[],
  speaks: (endpoint: InferenceEndpoint) => boolean,
): Translation | undefined {
  if (speaks(client)) return undefined;
  return candidates.find((translation) => translation.client === client && speaks(translation.node));
}

/**
 * The translation a request for `model` on `client` is served by over these nodes (the request path
 * and /admin/explain alike). `lacking`: nodes the request itself found without `client` (each
 * answered it with a route-level 404), judged as lacking it whether or not `views` shows it yet
 * (a worker's view of the fleet lags the registry that learns it).
 */
export function translationFor(
  candidates: readonly Translation[],
  client: InferenceEndpoint,
  model: string,
  views: readonly NodeView[],
  lacking?: ReadonlySet<string>,
): Translation | undefined {
  const native = lacking === undefined ? views : views.filter((view) => !lacking.has(view.spec.name));
  return chooseTranslation(client, candidates, (endpoint) => modelSpeaks(endpoint === client ? native : views, model, endpoint));
}
