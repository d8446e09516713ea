// Pure: how the nodes' JSON decoders match a body's keys to the fields they read (docs/security.md,
// "One reading of the model"). A node of a kind whose decoder matches keys case-insensitively
// (Ollama's Go encoding/json) reads `"Model"` as `model`, so a body carrying both can name one model
// to the gateway and another to the node; a kind whose decoder is not known (a plain OpenAI-
// compatible server, an `auto` node not told apart yet) is assumed to do the same.

import type { NodeKind } from '#src/config/index.ts';
import { serverKind } from './registry.ts';
import { kindOfNode, type ServerFacts } from './server-facts.ts';
import type { JsonKeyMatching } from './server-kind.ts';

/** The key matching of a node: its kind's, for `auto` the kind its answers showed (else the loosest). */
export function jsonKeysOf(kind: NodeKind, facts: ServerFacts | undefined): JsonKeyMatching {
  return serverKind(kindOfNode(kind, facts)).jsonKeys;
}

/** The loosest of several nodes' key matchings: `exact` only when every one is (none = `exact`). */
export function loosestJsonKeys(matchings: Iterable<JsonKeyMatching>): JsonKeyMatching {
  for (const matching of matchings) if (matching !== 'exact') return matching;
  return 'exact';
}
