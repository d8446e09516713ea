// Pure: from a raw JSON body, find the requested model, apply the default and aliases, resolve the
// name as the fleet's nodes do (`servedName`: routing's servedModelName over the snapshot), and
// produce the bytes to send upstream (the original bytes when nothing changed, so bodies pass
// untouched; otherwise only the model's value is replaced by the id the nodes listed).

import type { PolicyName } from '#src/config/index.ts';
import { badRequest, type GatewayError } from '#src/core/errors.ts';
import type { JsonKeyMatching } from '#src/kinds/index.ts';
import { MAX_JSON_DEPTH, scanBody, withTopLevelString } from './raw-json.ts';
import { secondReading } from './model-readings.ts';

export interface ModelCatalog {
  readonly defaultModel: string | undefined;
  /** alias → served model id. */
  readonly aliases: ReadonlyMap<string, string>;
  /** served model id → its group (undefined = no group). */
  readonly groups: ReadonlyMap<string, string | undefined>;
  /** served model id → its own selection policy (absent = `[routing] policy`). */
  readonly policies: ReadonlyMap<string, PolicyName>;
}

export interface ResolvedRequest {
  /** The served model id routing uses and the node receives. */
  readonly model: string;
  /** What the client asked for (an alias, or the default when absent). */
  readonly requestedModel: string;
  readonly group: string | undefined;
  /** The model's own selection policy from [[models.available]]; undefined = `[routing] policy`. */
  readonly policy: PolicyName | undefined;
  readonly stream: boolean;
  readonly body: Buffer;
  /** The parsed body, for later inspection (e.g. prompt size); never mutated. */
  readonly json: Readonly<Record<string, unknown>>;
}

/**
 * `servedName`: the listed id a configured name stands for (identity = names are sent as given).
 * `keyMatching`: how the nodes that may receive the body match JSON keys (model-readings.ts);
 * asked only for a body with a case variant of `model`; unknown = the loosest.
 */
export function resolveRequest(
  raw: Buffer,
  catalog: ModelCatalog,
  servedName: (name: string) => string = (name) => name,
  keyMatching: () => JsonKeyMatching = () => 'case-insensitive',
): ResolvedRequest | GatewayError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    return badRequest(`request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return badRequest('request body must be a JSON object');
  }
  const scan = scanBody(raw, 'model');
  if (scan.tooDeep) return badRequest(`request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  const json = parsed as Record<string, unknown>;
  // The node must read the model (and every member) the gateway reads, or the body is refused:
  // judged only for a body that could be read otherwise ("model" twice, or a key with capitals).
  const ambiguous = scan.valueSpans.length > 1 || scan.casedKeys ? secondReading(scan, json, keyMatching) : undefined;
  if (ambiguous !== undefined) return ambiguous;
  const given = json.model;
  if (given !== undefined && given !== null && typeof given !== 'string') {
    return badRequest('`model` must be a string', 'model');
  }
  const requestedModel = given === undefined || given === null || given === '' ? catalog.defaultModel : given;
  if (requestedModel === undefined) {
    return badRequest('you must provide a model parameter (and no models.default is configured)', 'model');
  }
  const named = resolveModelName(requestedModel, catalog, servedName);
  const stream = json.stream === true;
  // Only the model's value changes; every other byte (big integers, 1e400, spacing) stays the client's.
  const body = named.model === given ? raw : withTopLevelString(raw, scan, 'model', named.model);
  // Named members, not a spread of `named` (a copy through the clone builtin on every request).
  return { model: named.model, group: named.group, policy: named.policy, requestedModel, stream, body, json };
}

export interface ResolvedName {
  readonly model: string;
  readonly group: string | undefined;
  readonly policy: PolicyName | undefined;
}

/** The alias applied, the name resolved as the nodes list it, and the settings declared for it. */
export function resolveModelName(
  requestedModel: string,
  catalog: ModelCatalog,
  servedName: (name: string) => string,
): ResolvedName {
  const configured = catalog.aliases.get(requestedModel) ?? requestedModel;
  const model = servedName(configured);
  // [[models.available]] settings follow the name they were declared for, whichever the nodes list.
  const declared = catalog.groups.has(configured) ? configured : model;
  return { model, group: catalog.groups.get(declared), policy: catalog.policies.get(declared) };
}
