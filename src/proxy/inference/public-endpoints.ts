// The public endpoint table: the inference routes (OpenAI's /v1/*, Anthropic's, Ollama's /api/*
// with its listings in ollama-routes.ts) behind the client keys — each key names its tenant
// (tenants/key-directory.ts), whose scope filters /v1/models and whose limits the inference
// handler applies; no tenant configured = open, every request the `default` tenant's — and
// /health, which stays open because load balancers and orchestrators probe it without
// credentials. It tells the fleet status only; the detailed report is the admin table's
// (admin/admin-endpoints.ts).
// Every path answers CORS for the allowed browser origins (cors.ts). One builder for the main
// thread and each request worker. Handlers read the current config on each call, so a reload
// applies to the next request.

import type { Clock } from '#src/core/clock.ts';
import type { ModelSpec } from '#src/config/types.ts';
import type { NodeRegistry } from '#src/nodes/index.ts';
import { presentedKey, unauthorized } from '../http/auth.ts';
import type { TenantSpec } from '#src/config/index.ts';
import { allowsSite, OPEN_TENANT, rotatingDirectory, tenantOf, type Tenant } from '#src/tenants/index.ts';
import { visibleTo } from './tenant-gate.ts';
import { subtree, TableBuilder, type EndpointTable, type Handler } from '../http/endpoint-table.ts';
import { fleetStatus, healthHttpStatus } from './fleet-status.ts';
import { handleInference, type InferenceDeps } from './inference-handler.ts';
import { refuseBeforeInference } from './early-refusal.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fleetModels, type FleetModel } from '../request/models-list.ts';
import { modelIdOf, MODEL_PATH_PREFIX, retrieveModel } from './model-retrieve.ts';
import { withCors } from '../http/cors.ts';
import { GatewayError } from '#src/core/errors.ts';
import type { CorsOrigins } from '#src/config/index.ts';
import { servedModelName } from '#src/routing/index.ts';
import { mustVerify, verifyInbound, type ForwardInDeps, type PeerTenancy } from '../sites/forward-in.ts';
import type { MeshLink } from '#src/mesh/forwarding/index.ts';
import { freshRemoteModelList } from '../sites/remote-models.ts';
import { sendError } from '../http/openai-error.ts';
import { errorDialectFor } from '../http/error-dialect.ts';
import { INFERENCE_ENDPOINTS } from '#src/config/index.ts';
import { sendJson } from '../http/server.ts';
import { addOllamaRoutes } from './ollama-routes.ts';

/** Every inference route (config/endpoints.ts): OpenAI's and Anthropic's Messages; each is forwarded between sites alike. */
export const INFERENCE_PATHS = INFERENCE_ENDPOINTS;

export interface PublicEndpointDeps {
  readonly clock: Clock;
  readonly registry: Pick<NodeRegistry, 'views' | 'freshViews'>;
  /** The tenants in force (`[[tenants]]`, then `default` holding [server] api_keys); none = the OpenAI routes are open. */
  readonly tenants: () => readonly TenantSpec[];
  /** The models the config declares, listed by /v1/models even before a node reports them. */
  readonly configuredModels: () => readonly ModelSpec[];
  /** `[server] cors_origins`: the browser origins allowed to call these endpoints. */
  readonly corsOrigins: () => CorsOrigins;
  readonly inference: InferenceDeps;
  /** Federation ([mesh]); absent = alone: requests claiming to be forwarded are refused 401. */
  readonly mesh?: MeshLink | undefined;
  /** The config's tenants and `[[mesh.sites]]` pins: a forward is admitted as its site's tenant. */
  readonly peerTenancy: () => PeerTenancy;
}

export function publicEndpoints(deps: PublicEndpointDeps): EndpointTable {
  const directory = rotatingDirectory(deps.tenants);
  /** The tenant the request's key names (401 for none or an unknown one); the open tenant when none is configured. */
  const requireClientKey =
    (
      handler: (...args: [...Parameters<Handler>, Tenant]) => ReturnType<Handler>,
      refuse?: (req: IncomingMessage, res: ServerResponse, error: GatewayError) => void,
    ): Handler =>
    (req, res, url) => {
      const keys = directory();
      const tenant = keys.open ? OPEN_TENANT : keys.identify(presentedKey(req.headers));
      if (tenant === undefined) {
        req.resume();
        const error = unauthorized(
          'Incorrect or missing API key. Send it as "Authorization: Bearer <key>" (or "x-api-key: <key>").',
        );
        if (refuse !== undefined) refuse(req, res, error);
        else sendError(res, error, {}, errorDialectFor(url.pathname));
        return;
      }
      return handler(req, res, url, tenant);
    };

  const forwardIn: ForwardInDeps = {
    mesh: deps.mesh,
    clock: deps.clock,
    events: deps.inference.events,
    tenancy: deps.peerTenancy,
  };
  const table = new TableBuilder();
  for (const path of INFERENCE_PATHS) {
    // A refused key on an inference route is still a request: it gets its id and a line in the request log.
    const local = requireClientKey(
      (req, res, _url, tenant) => handleInference(deps.inference, path, req, res, undefined, tenant),
      (req, res, error) => refuseBeforeInference(deps.inference, path, req, res, error),
    );
    // A forwarded request is authenticated by its signature instead of a client key, and admitted as its site's tenant.
    table.add('POST', path, (req, res, url) =>
      mustVerify(forwardIn, req)
        ? verifyInbound(forwardIn, req, res, url, (inbound) =>
            handleInference(
              deps.inference,
              path,
              req,
              res,
              inbound,
              inbound.tenant === undefined ? undefined : tenantOf(inbound.tenant),
            ),
          )
        : local(req, res, url),
    );
  }
  /** The models the fleet serves, only those the tenant may reach: in its model scope, here or on a site in its site scope. */
  const fleetList = (tenant: Tenant): { object: 'list'; data: FleetModel[] } => {
    const list = fleetModels(deps.registry.views(), deps.configuredModels(), deps.clock.now());
    // Remote models only from the sites the tenant's requests may be forwarded to.
    if (deps.mesh !== undefined)
      list.data.push(...freshRemoteModelList(deps.mesh, list.data, deps.clock.now(), (site) => allowsSite(tenant.spec, site)));
    const visible = visibleTo(tenant);
    return visible === undefined ? list : { ...list, data: list.data.filter((entry) => visible(entry.id)) };
  };
  table.add(
    'GET',
    '/v1/models',
    requireClientKey((_req, res, _url, tenant) => sendJson(res, 200, fleetList(tenant))),
  );
  // `models.retrieve`: the id is the rest of the path, and may itself hold `/` and `:`.
  table.add(
    'GET',
    subtree(MODEL_PATH_PREFIX),
    requireClientKey((_req, res, url, tenant) => {
      const id = modelIdOf(url.pathname);
      const aliases = deps.inference.settings().catalog.aliases;
      const found =
        typeof id === 'string'
          ? retrieveModel(fleetList(tenant).data, id, (name) => servedModelName(aliases.get(name) ?? name, deps.registry.views()))
          : id;
      if (found instanceof GatewayError) sendError(res, found);
      else sendJson(res, 200, found);
    }),
  );
  // Ollama's native listing, version and the refused model-changing calls (its inference routes are in INFERENCE_PATHS).
  const mesh = deps.mesh;
  const remoteModels =
    mesh === undefined
      ? undefined
      : (tenant: Tenant, local: readonly { readonly id: string }[]) =>
          freshRemoteModelList(mesh, local, deps.clock.now(), (site) => allowsSite(tenant.spec, site)).map((m) => ({
            id: m.id,
            site: m.switchyard.site,
          }));
  addOllamaRoutes(table, {
    clock: deps.clock,
    registry: deps.registry,
    requireClientKey,
    ...(remoteModels === undefined ? {} : { remoteModels }),
  });
  table.add('GET', '/health', (_req, res) => {
    const status = fleetStatus(deps.registry.freshViews());
    sendJson(res, healthHttpStatus(status), { status });
  });
  return withCors(table.table(), deps.corsOrigins);
}
