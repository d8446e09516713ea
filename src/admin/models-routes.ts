// POST /admin/models/load and /admin/models/unload (`{"model", "node"}`; node optional for a load;
// `"evict_warm": true` lets a load take a slot the reconciler keeps for a warm model, or an unload
// take a warm model off a node the reconciler would load it on again; docs/models.md)
// and GET /admin/models (per model: where it runs, where it loads on demand, its desired state).
// Mutations are behind the admin guard; the answer says what was done or why not.

import { badRequest, GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import { readBody, sendError, sendJson, type TableBuilder } from '#src/proxy/index.ts';
import type { ModelActionOutcome } from '#src/nodes/index.ts';
import type { AdminDeps, Guard } from './admin-deps.ts';

const MAX_BODY_BYTES = 16 * 1024;

/** The HTTP status an outcome is answered with. */
export function outcomeStatus(outcome: ModelActionOutcome): number {
  if (outcome.outcome === 'done' || outcome.outcome === 'already') return 200;
  if (outcome.outcome === 'failed') return 502;
  switch (outcome.code) {
    case 'unknown_node':
    case 'not_listed':
      return 404;
    case 'node_required':
      return 400;
    case 'not_supported':
      return 422;
    default:
      return 409;
  }
}

type ModelRequest =
  | { readonly model: string; readonly node: string | undefined; readonly evictWarm: boolean }
  | { readonly error: string; readonly param: string };

function readModelRequest(raw: Buffer): ModelRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return { error: 'the body must be JSON, e.g. {"model": "llama", "node": "gpu-1"}', param: 'body' };
  }
  if (!isRecord(body))
    return { error: 'the body must be a JSON object, e.g. {"model": "llama", "node": "gpu-1"}', param: 'body' };
  if (typeof body.model !== 'string' || body.model === '')
    return { error: 'model is required (a model id as the nodes list it)', param: 'model' };
  if (body.node !== undefined && (typeof body.node !== 'string' || body.node === ''))
    return { error: 'node must be a node name', param: 'node' };
  if (body.evict_warm !== undefined && typeof body.evict_warm !== 'boolean')
    return { error: 'evict_warm must be true or false', param: 'evict_warm' };
  return { model: body.model, node: typeof body.node === 'string' ? body.node : undefined, evictWarm: body.evict_warm === true };
}

export function modelsRoutes(table: TableBuilder, deps: AdminDeps, guard: Guard): void {
  const models = deps.models;
  if (models === undefined) return;
  table.add(
    'GET',
    '/admin/models',
    guard('read', (_req, res) => sendJson(res, 200, models.view())),
  );
  for (const action of ['load', 'unload'] as const) {
    table.add(
      'POST',
      `/admin/models/${action}`,
      guard('change', async (req, res) => {
        let raw: Buffer;
        try {
          raw = await readBody(req, MAX_BODY_BYTES);
        } catch (error) {
          sendError(res, error instanceof GatewayError ? error : badRequest('the body could not be read', 'body'));
          return;
        }
        const asked = readModelRequest(raw);
        if ('error' in asked) {
          sendError(res, badRequest(asked.error, asked.param));
          return;
        }
        const model = deps.catalog().aliases.get(asked.model) ?? asked.model;
        const outcome = await models.act(action, model, asked.node, { evictWarm: asked.evictWarm });
        sendJson(res, outcomeStatus(outcome), outcome);
      }),
    );
  }
}
