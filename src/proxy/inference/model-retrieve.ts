// Pure: GET /v1/models/{id} (the openai client's `models.retrieve`): the fleet list's entry for a
// name, found as a request naming it would be routed — [models] aliases, then the name as the
// nodes take it (routing's servedModelName) — or 404 model_not_found with the nearest names.

import { badRequest, type GatewayError } from '#src/core/errors.ts';
import { closestNames, MAX_SUGGESTIONS } from '#src/routing/index.ts';
import type { FleetModel } from '../request/models-list.ts';
import { unknownModel } from '../refusal/refusal-errors.ts';

/** Where the id starts in the path; what follows is the id, percent-decoded (`meta-llama%2FLlama-3-8B`). */
export const MODEL_PATH_PREFIX = '/v1/models/';

/** The id the path names, or why it names none (bad percent-encoding). */
export function modelIdOf(pathname: string): string | GatewayError {
  const encoded = pathname.slice(MODEL_PATH_PREFIX.length);
  try {
    return decodeURIComponent(encoded);
  } catch {
    return badRequest('the model id in the path is not valid percent-encoding (encode it with encodeURIComponent)', 'model');
  }
}

/** `resolve`: the served id a configured or typed name stands for (aliases, then the nodes' rules). */
export function retrieveModel(
  list: readonly FleetModel[],
  requested: string,
  resolve: (name: string) => string,
): FleetModel | GatewayError {
  const byId = new Map(list.map((entry) => [entry.id, entry]));
  const found = byId.get(requested) ?? byId.get(resolve(requested));
  if (found !== undefined) return found;
  return unknownModel(requested, closestNames(requested, byId.keys(), MAX_SUGGESTIONS));
}
