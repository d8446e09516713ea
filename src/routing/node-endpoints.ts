// Pure: which endpoints a node serves, as routing judges it — its kind's set (or `[[nodes]]
// endpoints`; for `kind = "auto"`, the set of the kind its answers showed: kinds/server-facts.ts),
// less the endpoints its stated version predates (kinds/endpoint-versions.ts: known before any
// request is sent) and those it answered with a route-level 404. The serves-endpoint filter, the
// Ollama listings and /admin/hosts all read it here.

import type { InferenceEndpoint, NodeKind } from '#src/config/index.ts';
import { allowsModel } from '#src/discovery/index.ts';
import { kindOfNode, predatesEndpoint, servedEndpoints } from '#src/kinds/index.ts';
import type { NodeView } from '#src/nodes/index.ts';

type EndpointView = Pick<NodeView, 'spec' | 'capacity' | 'lackingEndpoints'>;

/** The kind the node is judged as (`auto` until its answers show one). */
export function judgedKind(view: EndpointView): NodeKind {
  return kindOfNode(view.spec.kind, view.capacity.server);
}

/** Why the node does not serve `endpoint`, for the operator; undefined = it serves it. */
export function endpointLack(view: EndpointView, endpoint: InferenceEndpoint): string | undefined {
  const learned = view.lackingEndpoints?.[endpoint];
  if (learned !== undefined) return `answered POST ${endpoint} with a route-level 404 (${learned})`;
  const facts = view.capacity.server;
  const kind = judgedKind(view);
  if (!servedEndpoints(view.spec, facts).includes(endpoint)) {
    const from =
      view.spec.endpoints !== undefined
        ? 'its [[nodes]] endpoints'
        : kind === view.spec.kind
          ? `its kind (${kind})`
          : `its kind (auto, found to be ${kind})`;
    return `${from} does not serve POST ${endpoint}`;
  }
  // A configured set is the operator's word: a version is judged only against a kind's own set.
  return view.spec.endpoints === undefined ? predatesEndpoint(kind, facts?.version, endpoint) : undefined;
}

/** The endpoints it serves, and those of its set it lacks with why (by version, or a learned 404 with what it said). */
export function nodeEndpoints(view: EndpointView): {
  readonly serves: readonly InferenceEndpoint[];
  readonly lacking: Readonly<Record<string, string>>;
} {
  const lacking: Record<string, string> = {};
  const serves: InferenceEndpoint[] = [];
  for (const endpoint of servedEndpoints(view.spec, view.capacity.server)) {
    const learned = view.lackingEndpoints?.[endpoint];
    const lack = learned ?? endpointLack(view, endpoint);
    if (lack === undefined) serves.push(endpoint);
    else lacking[endpoint] = lack;
  }
  return { serves, lacking: { ...lacking, ...view.lackingEndpoints } };
}

type ModelEndpointView = EndpointView & Pick<NodeView, 'discovery' | 'modelsById'>;

/**
 * Whether some node that serves `model` (its listing and allow-list, as the serves-model filter
 * judges, whatever its health) serves `endpoint`: what decides whether a request must be translated.
 */
export function modelSpeaks(views: readonly ModelEndpointView[], model: string, endpoint: InferenceEndpoint): boolean {
  return views.some(
    (view) =>
      allowsModel(view.discovery, model, view.modelsById, view.spec.allowedModels).ok &&
      endpointLack(view, endpoint) === undefined,
  );
}
