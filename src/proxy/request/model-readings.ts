// Pure: one reading of a JSON body's model (docs/security.md, "One reading of the model"). The
// gateway routes, scopes, budgets and logs by the body's top-level `"model"`, then sends the body
// on; the node decodes it again. Where the two decoders could disagree the body is refused (400,
// naming the key), so the model the tenant's scope allowed is the model the node serves:
// - `"model"` more than once (written plainly or with escapes, `"mod\u0065l"`): JavaScript, Python,
//   Go and nlohmann::json keep the last, other decoders the first or either — refused for every kind;
// - a case variant (`"Model"`, `"MODEL"`) beside it: Go's encoding/json (Ollama) matches keys
//   case-insensitively and keeps the last match — refused when a node that may receive the body
//   reads keys so, or might (its kind's decoder is not known: kinds/json-keys.ts);
// - likewise any two top-level keys that fold onto one (`"max_tokens"` and `"Max_Tokens"`,
//   `"stream"` and `"STREAM"`): the gateway sizes, reserves and streams by the one it reads, and
//   such a node would read the other;
// - and, at any depth, a case variant of a key the gateway reads, alone or beside it
//   (`"MAX_TOKENS"`, `"options.Num_Predict"`, a message's `"CONTENT"`): read-keys.ts.

import { badRequest, type GatewayError } from '#src/core/errors.ts';
import { jsonKeysOf, loosestJsonKeys, type JsonKeyMatching } from '#src/kinds/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import { foldCase, type BodyScan } from './raw-json.ts';
import { caseVariantReading } from './read-keys.ts';

/**
 * The refusal of a body whose model (or another top-level member) a node could read otherwise than
 * the gateway; undefined = one reading. `keyMatching` (the loosest of the nodes that may receive
 * it) is asked only when some key could fold onto another, so a plain request costs nothing here.
 */
export function secondReading(
  scan: Pick<BodyScan, 'valueSpans' | 'variantKeys' | 'casedKeys'>,
  json: Readonly<Record<string, unknown>>,
  keyMatching: () => JsonKeyMatching,
): GatewayError | undefined {
  const count = scan.valueSpans.length;
  if (count > 1) {
    return badRequest(
      `body has "model" ${count === 2 ? 'twice' : `${count} times`}: decoders differ in which one they read; send it once`,
      'model',
    );
  }
  if (!scan.casedKeys || keyMatching() === 'exact') return undefined;
  const variant = scan.variantKeys[0];
  if (variant !== undefined) {
    return badRequest(
      `body has ${JSON.stringify(variant)} beside "model": a node may read either (its JSON keys match case-insensitively); send "model" only`,
      'model',
    );
  }
  return foldedTwice(json) ?? caseVariantReading(json);
}

/** Two top-level keys that are one key to a case-insensitive decoder: refused, naming both. */
function foldedTwice(json: Readonly<Record<string, unknown>>): GatewayError | undefined {
  const seen = new Map<string, string>();
  for (const key of Object.keys(json)) {
    const folded = foldCase(key);
    const first = seen.get(folded);
    if (first !== undefined) {
      return badRequest(
        `body has ${JSON.stringify(key)} beside ${JSON.stringify(first)}: a node may read either (its JSON keys match case-insensitively); send one`,
        first,
      );
    }
    seen.set(folded, key);
  }
  return undefined;
}

/** How the fleet's nodes match JSON keys: the loosest of them (each node's judged kind). */
export function fleetJsonKeys(views: readonly Pick<NodeView, 'spec' | 'capacity'>[]): JsonKeyMatching {
  return loosestJsonKeys(views.map((view) => jsonKeysOf(view.spec.kind, view.capacity.server)));
}
