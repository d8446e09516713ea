// The public endpoint table: the OpenAI routes (/v1/*) behind the client API keys, and /health,
// which stays open because load balancers and orchestrators probe it without credentials. It tells
// the fleet status only; the detailed report is the admin table's (admin/admin-endpoints.ts).
// Every path answers CORS for the allowed browser origins (cors.ts). One builder for the main
// thread and each request worker. Handlers read the current config on each call, so a reload
// applies to the next request.

import type { Clock } from '#src/core/clock.ts';
import type { ModelSpec } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { presentedKey, rotatingKeyCheck, unauthorized } from '../http/auth.ts';
import { subtree, TableBuilder, type EndpointTable, type Handler } from '../http/endpoint-table.ts';
import { fleetStatus, healthHttpStatus } from './fleet-status.ts';
import { handleInference, type InferenceDeps } from './inference-handler.ts';
import { fleetModels, type FleetModel } from '../request/models-list.ts';
import { modelIdOf, MODEL_PATH_PREFIX, retrieveModel } from './model-retrieve.ts';
import { withCors } from '../http/cors.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { CorsOrigins } from '#src/config/index.ts';
import { servedModelName } from '#src/routing/index.ts';
import { mustVerify, verifyInbound, type ForwardInDeps } from '../sites/forward-in.ts';
import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import { freshRemoteModelList } from '../sites/remote-models.ts';
import { sendError } from '../http/openai-error.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { INFERENCE_ENDPOINTS } from '#src/config/index.ts';
import { sendJson } from '../http/server.ts';

/** Every inference route (config/endpoints.ts): OpenAI's and Anthropic's Messages; each is forwarded between sites alike. */
export const INFERENCE_PATHS = INFERENCE_ENDPOINTS;

export interface PublicEndpointDeps {
  readonly clock: Clock;
  readonly registry: Pick<NodeRegistry, 'views' | 'freshViews'>;
  /** The client API keys; none means the OpenAI routes are open. */
  readonly clientKeys: () => readonly string[];
  /** The models the config declares, listed by /v1/models even before a node reports them. */
  readonly configuredModels: () => readonly ModelSpec[];
  /** `[server] cors_origins`: the browser origins allowed to call these endpoints. */
  readonly corsOrigins: () => CorsOrigins;
  readonly inference: InferenceDeps;
  /** Federation ([mesh]); absent = alone: requests claiming to be forwarded are refused 401. */
  readonly mesh?: MeshLink | undefined;
}

export function publicEndpoints(deps: PublicEndpointDeps): EndpointTable {
  const clientKeyOk = rotatingKeyCheck(deps.clientKeys);
  const requireClientKey =
    (handler: Handler): Handler =>
    (req, res, url) => {
      if (deps.clientKeys().length > 0 && !clientKeyOk(presentedKey(req.headers))) {
        req.resume();
        sendError(res, unauthorized('Incorrect or missing API key. Send it as "Authorization: Bearer <key>" (or "x-api-key: <key>").'), {}, errorDialectFor(url.pathname));
        return;
      }
      return handler(req, res, url);
    };

  const forwardIn: ForwardInDeps = { mesh: deps.mesh, clock: deps.clock, events: deps.inference.events };
  const table = new TableBuilder();
  for (const path of INFERENCE_PATHS) {
    const local = requireClientKey((req, res) => handleInference(deps.inference, path, req, res));
    // A forwarded request is authenticated by its signature instead of a client key.
    table.add('POST', path, (req, res, url) =>
      mustVerify(forwardIn, req) ? verifyInbound(forwardIn, req, res, url, (inbound) => handleInference(deps.inference, path, req, res, inbound)) : local(req, res, url),
    );
  }
  const fleetList = (): { object: 'list'; data: FleetModel[] } => {
    const list = fleetModels(deps.registry.views(), deps.configuredModels(), deps.clock.now());
    if (deps.mesh !== undefined) list.data.push(...freshRemoteModelList(deps.mesh, list.data, deps.clock.now()));
    return list;
  };
  table.add('GET', '/v1/models', requireClientKey((_req, res) => sendJson(res, 200, fleetList())));
  // `models.retrieve`: the id is the rest of the path, and may itself hold `/` and `:`.
  table.add(
    'GET',
    subtree(MODEL_PATH_PREFIX),
    requireClientKey((_req, res, url) => {
      const id = modelIdOf(url.pathname);
      const aliases = deps.inference.settings().catalog.aliases;
      const found = typeof id === 'string' ? retrieveModel(fleetList().data, id, (name) => servedModelName(aliases.get(name) ?? name, deps.registry.views())) : id;
      if (found instanceof GatewayError) sendError(res, found);
      else sendJson(res, 200, found);
    }),
  );
  table.add('GET', '/health', (_req, res) => {
    const status = fleetStatus(deps.registry.freshViews());
    sendJson(res, healthHttpStatus(status), { status });
  });
  return withCors(table.table(), deps.corsOrigins);
}
