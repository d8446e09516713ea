// The Ollama native routes the gateway answers itself (docs/protocols-endpoints.md, "Ollama's native
// API"): `GET /api/tags` and `GET /api/ps` from what it knows of every Ollama node, filtered by the
// caller's model scope like /v1/models; `GET /api/version`; and the model-changing calls (pull,
// push, create, copy, delete, blobs) refused 403 — they would change a node's models, which is the
// admin API's business, never a client key's. The inference routes (/api/chat, …) are the shared
// inference table's (public-endpoints.ts). Every path here is behind the client keys.

import type { Clock } from '#src/core/clock.ts';
import { GatewayError, routeNotFound } from '#src/core/errors.ts';
import type { FleetView } from '#src/ports/index.ts';
import type { Caller } from '../feature/request-feature.ts';
import { OLLAMA_ERRORS } from '../http/error-dialect.ts';
import { sendError } from '../http/openai-error.ts';
import { sendJson, type Handler, type TableBuilder } from '../http/server.ts';
import {
  OLLAMA_LISTING_PATHS,
  OLLAMA_MANAGEMENT_ROUTES,
  OLLAMA_ROOT,
  ollamaPs,
  ollamaTags,
  ollamaVersion,
  type RemoteTag,
} from '../request/ollama-listing.ts';

export function managementRefused(path: string): GatewayError {
  const shown = path.endsWith('*') ? `${path.slice(0, -1)}…` : path;
  return new GatewayError(
    'GW_FORBIDDEN',
    `${shown} changes a node's models, which the gateway does not allow on its public listener; manage models through the gateway's admin API or on the node itself`,
    {
      status: 403,
      openaiType: 'invalid_request_error',
      openaiCode: 'model_management_refused',
    },
  );
}

/**
 * `GET /` answers as Ollama's does ("Ollama is running", no key needed, as on Ollama: it says
 * nothing but that the server is up) to any client but a browser: a request whose `Accept` names
 * `text/html` gets the usual 404, pointing at the dashboard, so an operator opening the gateway's
 * root is never told it is an Ollama.
 */
function ollamaRoot(): Handler {
  return (req, res) => {
    req.resume();
    if (/\btext\/html\b/i.test(String(req.headers.accept ?? ''))) {
      sendError(res, routeNotFound(req.method ?? 'GET', '/ (the dashboard is at /admin/ on the admin listener)'));
      return;
    }
    res.writeHead(200, { 'content-type': OLLAMA_ROOT.contentType, 'content-length': Buffer.byteLength(OLLAMA_ROOT.text) });
    res.end(req.method === 'HEAD' ? undefined : OLLAMA_ROOT.text);
  };
}

export interface OllamaRouteDeps {
  readonly clock: Clock;
  readonly fleet: Pick<FleetView, 'views'>;
  /** Wraps a handler with the features' client checks, which decide its caller (public-endpoints.ts). */
  readonly keyed: (handler: (...args: [...Parameters<Handler>, Caller]) => ReturnType<Handler>) => Handler;
  /** The models served elsewhere (fresh remote sites) that `local` lacks, within the caller's site scope. */
  readonly elsewhere: (caller: Caller, local: readonly { readonly id: string }[]) => readonly RemoteTag[];
}

export function addOllamaRoutes(table: TableBuilder, deps: OllamaRouteDeps): void {
  const { keyed } = deps;
  const tags = keyed((_req, res, _url, caller) =>
    sendJson(
      res,
      200,
      ollamaTags(deps.fleet.views(), caller.visible, deps.clock.now(), (local) => deps.elsewhere(caller, local)),
    ),
  );
  const version = keyed((_req, res) => sendJson(res, 200, ollamaVersion()));
  // Ollama answers HEAD on these two as well (node:http sends no body for a HEAD).
  for (const method of ['GET', 'HEAD']) {
    table.add(method, OLLAMA_LISTING_PATHS.tags, tags);
    table.add(method, OLLAMA_LISTING_PATHS.version, version);
  }
  for (const method of ['GET', 'HEAD']) table.add(method, OLLAMA_ROOT.path, ollamaRoot());
  table.add(
    'GET',
    OLLAMA_LISTING_PATHS.ps,
    keyed((_req, res, _url, caller) => sendJson(res, 200, ollamaPs(deps.fleet.views(), caller.visible))),
  );
  for (const [method, path] of OLLAMA_MANAGEMENT_ROUTES) {
    table.add(
      method,
      path,
      keyed((req, res) => {
        req.resume();
        sendError(res, managementRefused(path), {}, OLLAMA_ERRORS);
      }),
    );
  }
}
