// The public endpoint table: the inference routes (OpenAI's /v1/*, Anthropic's, Ollama's /api/*
// with its listings in ollama-routes.ts), the model listings, and /health, which stays open because
// load balancers and orchestrators probe it without credentials (it tells the fleet status only;
// the detailed report is the admin table's, admin/admin-endpoints.ts). Who a request is served as
// is the features' business (../feature/request-feature.ts): their route wrappers check client
// keys and take other sites' forwards; with none, every request is the open caller's. Every path
// answers CORS for the allowed browser origins (cors.ts). One builder for the main thread and each
// request worker. Handlers read the current config on each call, so a reload applies to the next request.

import type { IncomingMessage } from 'node:http';
import type { Clock } from '#src/core/clock.ts';
import { GatewayError, routeNotFound } from '#src/core/errors.ts';
import type { ModelSpec } from '#src/config/types.ts';
import { CONTROL_PATH, INFERENCE_ENDPOINTS, RESPONSES_PREFIX, responseIdOf, type CorsOrigins } from '#src/config/index.ts';
import type { FleetView } from '#src/ports/index.ts';
import { servedModelName } from '#src/routing/index.ts';
import { withCors } from '../http/cors.ts';
import { ANTHROPIC_ERRORS, errorDialectFor, type ErrorDialect } from '../http/error-dialect.ts';
import { sendError } from '../http/openai-error.ts';
import { sendJson, subtree, TableBuilder, type EndpointTable, type Handler } from '../http/server.ts';
import { anthropicModel, anthropicPage, pageQuery, wantsAnthropicShape } from '../request/anthropic-models.ts';
import { fleetModels, type FleetModel } from '../request/models-list.ts';
import {
  OPEN_CALLER,
  type Caller,
  type CallerRoute,
  type ForwardRefusal,
  type RefuseRoute,
  type RequestFeature,
  type FeatureRouteDeps,
} from '../feature/request-feature.ts';
import { refuseBeforeInference } from './early-refusal.ts';
import { fleetStatus, healthHttpStatus } from './fleet-status.ts';
import { handleInference } from './inference-handler.ts';
import type { InferenceDeps } from './inference-deps.ts';
import { modelIdOf, MODEL_PATH_PREFIX, retrieveModel } from './model-retrieve.ts';
import { addOllamaRoutes } from './ollama-routes.ts';
import { forwardControl, forwardToOwner, type OwnerRouteDeps } from './owner-routes.ts';

/** Every inference route (config/endpoints.ts): OpenAI's and Anthropic's Messages; each is forwarded between sites alike. */
export const INFERENCE_PATHS = INFERENCE_ENDPOINTS;

export interface PublicEndpointDeps {
  readonly clock: Clock;
  readonly fleet: Pick<FleetView, 'views' | 'freshViews'>;
  /** The models the config declares, listed by /v1/models even before a node reports them. */
  readonly configuredModels: () => readonly ModelSpec[];
  /** `[server] cors_origins`: the browser origins allowed to call these endpoints (a change rebuilds the table). */
  readonly corsOrigins: CorsOrigins;
  readonly inference: InferenceDeps;
  /** The plane's request features, in order (plane/request-features.ts): later ones wrap earlier ones. */
  readonly features: readonly RequestFeature[];
  /** Where no feature takes forwards: how a request claiming to be one is refused (plane/request-features.ts). */
  readonly refusedForwards: ForwardRefusal;
}

export function publicEndpoints(deps: PublicEndpointDeps): EndpointTable {
  const { features } = deps;
  const clients = features.flatMap((f) => (f.clients === undefined ? [] : [f.clients]));
  const forwards = features.flatMap((f) => (f.forwards === undefined ? [] : [f.forwards]));
  /** A keyed route: its caller as the client checks decide (the open caller when there are none). */
  const keyed = (route: CallerRoute, refuse: RefuseRoute = refuseListing): Handler => {
    const wrapped = clients.reduce((next, wrap) => wrap(next, refuse), route);
    return (req, res, url) => wrapped(req, res, url, undefined);
  };
  const table = new TableBuilder();
  for (const path of INFERENCE_PATHS) {
    // A refused key on an inference route is still a request: it gets its id and a line in the request log.
    const refuse: RefuseRoute = (req, res, _url, error) => refuseBeforeInference(deps.inference, path, req, res, error);
    const handler: CallerRoute = (req, res, _url, caller) => handleInference(deps.inference, path, req, res, caller);
    const route = [...clients, ...forwards].reduce((next, wrap) => wrap(next, refuse), handler);
    table.add(
      'POST',
      path,
      forwards.length === 0 ? refusingForwards(route, deps.refusedForwards) : (r, s, u) => route(r, s, u, undefined),
    );
  }
  /** The models the fleet serves, only those the caller may reach: in its model scope, here or on a site in its site scope. */
  const elsewhere = features.flatMap((f) => (f.models === undefined ? [] : [f.models]));
  const fleetList = (caller: Caller): { object: 'list'; data: FleetModel[] } => {
    const list = fleetModels(deps.fleet.views(), deps.configuredModels(), deps.clock.now());
    for (const models of elsewhere) list.data.push(...models(caller, list.data));
    const visible = caller.visible;
    return visible === undefined ? list : { ...list, data: list.data.filter((entry) => visible(entry.id)) };
  };
  // An Anthropic client (it sends `anthropic-version`) gets Anthropic's shape and paging; any other, OpenAI's list.
  table.add(
    'GET',
    '/v1/models',
    keyed((req, res, url, caller) => {
      const list = fleetList(caller ?? OPEN_CALLER);
      if (!wantsAnthropicShape(req.headers)) return sendJson(res, 200, list);
      const query = pageQuery(url.searchParams);
      if (query instanceof GatewayError) sendError(res, query, {}, ANTHROPIC_ERRORS);
      else sendJson(res, 200, anthropicPage(list.data, query));
    }),
  );
  // `models.retrieve`: the id is the rest of the path, and may itself hold `/` and `:`.
  table.add(
    'GET',
    subtree(MODEL_PATH_PREFIX),
    keyed((req, res, url, caller) => {
      const anthropic = wantsAnthropicShape(req.headers);
      const id = modelIdOf(url.pathname);
      const aliases = deps.inference.settings.catalog.aliases;
      const found =
        typeof id === 'string'
          ? retrieveModel(fleetList(caller ?? OPEN_CALLER).data, id, (name) =>
              servedModelName(aliases.get(name) ?? name, deps.fleet.views()),
            )
          : id;
      if (found instanceof GatewayError) sendError(res, found, {}, listingDialect(req, url.pathname));
      else sendJson(res, 200, anthropic ? anthropicModel(found) : found);
    }),
  );
  // The routes that name an answer, not a model: to the node that produced it, for the caller's tenant (owner-routes.ts).
  const owners: OwnerRouteDeps = {
    fleet: { view: (name) => deps.fleet.views().find((view) => view.spec.name === name) },
    pools: deps.inference.pools,
    answerOwner: deps.inference.answerOwner,
    newRequestId: deps.inference.newRequestId,
  };
  const stored = keyed((req, res, url, caller) => {
    const id = responseIdOf(url.pathname);
    if (id === undefined) return sendError(res, routeNotFound(req.method ?? 'GET', url.pathname));
    return forwardToOwner(
      owners,
      req,
      res,
      { id, pathAndQuery: url.pathname + url.search, body: undefined },
      caller ?? OPEN_CALLER,
    );
  });
  table.add('GET', subtree(RESPONSES_PREFIX), stored);
  table.add('DELETE', subtree(RESPONSES_PREFIX), stored);
  table.add(
    'POST',
    CONTROL_PATH,
    keyed((req, res, _url, caller) => forwardControl(owners, req, res, caller ?? OPEN_CALLER)),
  );
  // The features' own routes (a resumable stream's, the Files and Batches API): keyed ones behind the same client checks.
  const routeDeps: FeatureRouteDeps = {
    node: owners.fleet.view,
    pools: owners.pools,
    answerOwner: owners.answerOwner,
    newRequestId: owners.newRequestId,
    serve: (endpoint, req, res, caller) => handleInference(deps.inference, endpoint, req, res, caller),
  };
  for (const feature of features) {
    for (const { method, path, keyed: withKey, route } of feature.routes?.(routeDeps) ?? []) {
      table.add(method, path, withKey === false ? (req, res, url) => route(req, res, url, undefined) : keyed(route));
    }
  }
  // Ollama's native listing, version and the refused model-changing calls (its inference routes are in INFERENCE_PATHS).
  addOllamaRoutes(table, {
    clock: deps.clock,
    fleet: deps.fleet,
    keyed: (handler) => keyed((req, res, url, caller) => handler(req, res, url, caller ?? OPEN_CALLER)),
    elsewhere: (caller, local) =>
      elsewhere.flatMap((models) => models(caller, local).map((m) => ({ id: m.id, site: m.switchyard.site }))),
  });
  table.add('GET', '/health', (_req, res) => {
    const status = fleetStatus(deps.fleet.freshViews());
    sendJson(res, healthHttpStatus(status), { status });
  });
  return withCors(table.table(), deps.corsOrigins);
}

/** A listing refuses in its path's error dialect, or Anthropic's for a client that sends `anthropic-version`. */
function listingDialect(req: IncomingMessage, pathname: string): ErrorDialect {
  return wantsAnthropicShape(req.headers) ? ANTHROPIC_ERRORS : errorDialectFor(pathname);
}

const refuseListing: RefuseRoute = (req, res, url, error) => sendError(res, error, {}, listingDialect(req, url.pathname));

/**
 * A gateway that takes no forwards (no [mesh]) refuses a request claiming to be one (its header;
 * one lookup), whatever client key it carries; it is never forwarded on.
 */
function refusingForwards(route: CallerRoute, refusal: ForwardRefusal): Handler {
  const { header, refuse } = refusal;
  return (req, res, url) => {
    if (req.headers[header] === undefined) return route(req, res, url, undefined);
    refuse(req, res);
  };
}
