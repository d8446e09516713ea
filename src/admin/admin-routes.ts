// The /admin/* routes: read views (hosts, explain, runtime) and the few commands main.ts hands in.

import { badRequest } from '#src/core/errors.ts';
import type { TargetUrl } from '#src/core/request-target.ts';
import { fleetRatio } from '#src/capacity/index.ts';
import { chatBytesBounds, sendError, sendJson, sessionKeyOf, type TableBuilder } from '#src/proxy/index.ts';
import { routeRequestFor, servedModelName, sessionFeature } from '#src/routing/index.ts';
import { explainQueue, explainRouting } from './explain.ts';
import { featureActions } from './feature-actions.ts';
import { hostsView } from './hosts-view.ts';
import type { AdminDeps, Guard } from './admin-deps.ts';
import { INFERENCE_ENDPOINTS, isInferenceEndpoint, type InferenceEndpoint } from '#src/config/index.ts';

export function adminRoutes(table: TableBuilder, deps: AdminDeps, guard: Guard): void {
  table.add(
    'GET',
    '/admin/hosts',
    guard('read', (_req, res) => {
      const snapshot = deps.registry.snapshot();
      sendJson(
        res,
        200,
        hostsView({
          views: deps.registry.freshViews(),
          ...(deps.nodeSources === undefined ? {} : { nodeSources: deps.nodeSources }),
          inFlight: (node) => snapshot.inFlight(node),
          usage: (node, model) => snapshot.usage(node, model),
          load: (node) => snapshot.load?.(node),
          ...(deps.modelEvents === undefined ? {} : { modelEvents: deps.modelEvents() }),
          ...(deps.switchQueues === undefined ? {} : { switchQueues: deps.switchQueues() }),
          queueDepths: deps.queueDepths(),
          now: snapshot.now,
        }),
      );
    }),
  );
  table.add(
    'GET',
    '/admin/explain',
    guard('read', (req, res, url) => {
      const query = readExplainQuery(url, deps.catalog().aliases);
      if ('error' in query) {
        sendError(res, badRequest(query.error, query.param));
        return;
      }
      const snapshot = deps.registry.snapshot();
      // The name as a request naming it is routed: the id the nodes list (Ollama's `:latest`, router aliases).
      const model = servedModelName(query.model, snapshot.nodes);
      const declared = deps.catalog().groups.has(query.model) ? query.model : model;
      // prompt_bytes: a one-message chat prompt of that many bytes, bounded as the request path bounds it.
      const bounds =
        query.promptBytes === undefined || query.promptTokens !== undefined
          ? undefined
          : chatBytesBounds(query.promptBytes, fleetRatio(snapshot.nodes, model, snapshot.now));
      const sized = bounds === undefined ? query : { ...query, promptTokens: bounds.upper, minPromptTokens: bounds.lower };
      // tenant=NAME: routed as that tenant's request (its class, and the sites it may be forwarded to).
      const tenant = query.tenant === undefined ? undefined : deps.config().tenants.find((t) => t.name === query.tenant);
      if (query.tenant !== undefined && tenant === undefined) {
        sendError(res, badRequest(`no tenant named '${query.tenant}' in [[tenants]]`, 'tenant'));
        return;
      }
      const queueTenant =
        tenant === undefined ? undefined : { name: tenant.name, priority: tenant.priority, weight: tenant.weight };
      // The session as a request's is read: the explain request's own headers (-H 'x-claude-code-session-id: …'), else ?session=.
      const routing = deps.config().routing;
      const asked = url.searchParams.get('session');
      const session = !routing.sessions
        ? undefined
        : (sessionKeyOf(req.headers, {}, routing.affinityHeader) ??
          (asked === null || asked === '' ? undefined : { source: 'session query', value: asked }));
      const previous = url.searchParams.get('previous_response_id');
      const routed = routeRequestFor(
        {
          ...sized,
          sessionKey: sessionFeature(session),
          previousResponseId: routing.sessions && previous !== null && previous !== '' ? previous : undefined,
          model,
          group: deps.catalog().groups.get(declared),
          policy: deps.catalog().policies.get(declared),
          tenant: queueTenant,
        },
        routing,
      );
      // The features' parts: endpoint= is judged on the endpoint the request would be sent to (a feature's, where one says).
      const parts = deps.explain?.({ model, endpoint: query.endpoint }) ?? [];
      const endpoint = parts.reduce<string | undefined>((asked, part) => part.endpoint ?? asked, query.endpoint);
      const request = endpoint === undefined ? routed : { ...routed, endpoint: endpoint as InferenceEndpoint };
      const queue = deps.queues === undefined ? undefined : explainQueue(deps.queues()[model]);
      const explained = explainRouting(
        request,
        snapshot,
        deps.filters,
        deps.policies,
        deps.remote,
        tenant?.sites,
        queue,
        deps.switchQueues?.(),
      );
      sendJson(res, 200, parts.length === 0 ? explained : Object.assign({ ...explained }, ...parts.map((part) => part.fields)));
    }),
  );
  table.add(
    'GET',
    '/admin/sites',
    // A gateway that runs alone; with [mesh], the mesh's view of this path (its adminViews) replaces this one.
    guard('read', (_req, res) => sendJson(res, 200, { mesh: false, sites: [] })),
  );
  for (const [path, view] of Object.entries(deps.views ?? {})) {
    table.add(
      'GET',
      path,
      guard('read', async (_req, res) => sendJson(res, 200, await view())),
    );
  }
  featureActions(table, deps, guard);
  table.add(
    'GET',
    '/admin/runtime',
    guard('read', (_req, res) => sendJson(res, 200, deps.commands.runtime())),
  );
  table.add(
    'POST',
    '/admin/wake',
    guard('change', async (req, res, url) => {
      req.resume();
      const node = url.searchParams.get('node');
      if (!node) {
        sendError(res, badRequest('the node query parameter is required, e.g. /admin/wake?node=gpu-1', 'node'));
        return;
      }
      const result = await deps.commands.wake(node);
      const status =
        result === 'sent'
          ? 202
          : result === 'unknown_node'
            ? 404
            : result === 'not_wakeable'
              ? 409
              : result === 'failed'
                ? 502
                : 200;
      // The wake under way, so a caller told 'in_window' sees what it is waiting for.
      const view = deps.registry.view(node);
      const sentAt = view?.wake.lastSentAt;
      const window =
        view === undefined || sentAt === undefined
          ? {}
          : { sent_at: new Date(sentAt).toISOString(), window_ends_at: new Date(sentAt + view.spec.wakeTimeoutMs).toISOString() };
      sendJson(res, status, { node, result, ...window });
    }),
  );
  table.add(
    'POST',
    '/admin/reload',
    guard('change', async (req, res) => {
      req.resume();
      const outcome = await deps.commands.reload();
      if (outcome.ok) sendJson(res, 200, { status: 'reloaded' });
      else sendJson(res, 400, { status: 'rejected', problems: outcome.problems.map((p) => `${p.path}: ${p.message}`) });
    }),
  );
}

type ExplainQuery =
  | {
      readonly model: string;
      readonly promptTokens: number | undefined;
      readonly maxTokens: number | undefined;
      readonly promptBytes: number | undefined;
      readonly tenant: string | undefined;
      /** `endpoint=/v1/messages`: judged as a request on that endpoint (serves-endpoint); absent = any endpoint. */
      readonly endpoint: InferenceEndpoint | undefined;
    }
  | { readonly error: string; readonly param: string };

function readExplainQuery(url: TargetUrl, aliases: ReadonlyMap<string, string>): ExplainQuery {
  const asked = url.searchParams.get('model');
  if (!asked)
    return { error: 'the model query parameter is required, e.g. /admin/explain?model=llama&prompt_tokens=5000', param: 'model' };
  const count = (name: string): number | undefined | 'bad' => {
    const text = url.searchParams.get(name);
    if (text === null || text === '') return undefined;
    const value = Number(text);
    return Number.isInteger(value) && value >= 0 ? value : 'bad';
  };
  const promptTokens = count('prompt_tokens');
  if (promptTokens === 'bad') return { error: 'prompt_tokens must be a whole number of tokens', param: 'prompt_tokens' };
  const maxTokens = count('max_tokens');
  if (maxTokens === 'bad') return { error: 'max_tokens must be a whole number of tokens', param: 'max_tokens' };
  const promptBytes = count('prompt_bytes');
  if (promptBytes === 'bad') return { error: 'prompt_bytes must be a whole number of bytes', param: 'prompt_bytes' };
  const tenant = url.searchParams.get('tenant');
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !isInferenceEndpoint(endpoint))
    return { error: `endpoint must be one of: ${INFERENCE_ENDPOINTS.join(', ')}`, param: 'endpoint' };
  return {
    model: aliases.get(asked) ?? asked,
    promptTokens,
    maxTokens,
    promptBytes,
    tenant: tenant === null || tenant === '' ? undefined : tenant,
    endpoint,
  };
}
