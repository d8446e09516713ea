// Pure: the keys of a JSON body the gateway reads — to route (`model`), to size the prompt
// (prompt-size.ts, anthropic-prompt.ts, pair-prompt.ts), to reserve (max_tokens and its kin,
// Ollama's options.num_predict, `n`, `best_of`), to stream and ask for usage (`stream`,
// `stream_options`), for affinity (`user`) — at every depth, and whether a node whose decoder
// matches keys case-insensitively (Go's encoding/json, for every struct field at every depth:
// Ollama's request and message types) could read one of them otherwise than the gateway did
// (docs/security.md, "One reading of the model"). `{"messages":[{"role":"user","CONTENT":"…"}]}`
// is sized as an empty message and read by such a node as a long one; `"Max_Tokens": 100000` is
// reserved as the default and generated as asked. Such a body is refused 400, naming the key's
// path. Keys the gateway does not read (a tool's JSON schema, `format`) are not judged: whatever a
// node makes of them changes neither a reservation nor a route.

import { badRequest, type GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import { foldCase } from './raw-json.ts';

/** What is read of one object: each key read, with what is read of its value (undefined = the value as a whole). */
interface ReadObject {
  readonly keys: ReadonlyMap<string, ReadObject | undefined>;
  /** Each key read, by its case-folded form. */
  readonly folded: ReadonlyMap<string, string>;
}

type ReadSpec = { readonly [key: string]: ReadSpec | null };

function readObject(spec: ReadSpec): ReadObject {
  const keys = new Map<string, ReadObject | undefined>();
  const folded = new Map<string, string>();
  for (const [key, value] of Object.entries(spec)) {
    keys.set(key, value === null ? undefined : readObject(value));
    folded.set(foldCase(key), key);
  }
  return { keys, folded };
}

/** A content block or part: OpenAI's parts (`text`), Anthropic's blocks (text, thinking, a tool call's name and input, a tool result's content). */
const BLOCK_KEYS: ReadSpec = { type: null, text: null, thinking: null, name: null, input: null };
const BLOCK: ReadSpec = { ...BLOCK_KEYS, content: BLOCK_KEYS };
const MESSAGE: ReadSpec = { role: null, content: BLOCK, name: null, tool_calls: { function: { name: null, arguments: null } } };

/** What the gateway reads of a body, on any of its routes (a key read on one route is judged on all: refusing its variant costs nothing). */
const BODY = readObject({
  model: null,
  messages: MESSAGE,
  input: MESSAGE,
  system: BLOCK,
  prompt: null,
  instructions: null,
  tools: null,
  query: null,
  queries: null,
  documents: null,
  text_1: null,
  text_2: null,
  data_1: null,
  data_2: null,
  max_tokens: null,
  max_completion_tokens: null,
  max_output_tokens: null,
  n: null,
  best_of: null,
  stream: null,
  stream_options: { include_usage: null, continuous_usage_stats: null },
  options: { num_predict: null, num_ctx: null },
  user: null,
});

/**
 * The refusal of a body in which a key the gateway reads has a case variant — beside it, or alone
 * — that a case-insensitive decoder would read as that key; undefined = one reading.
 */
export function caseVariantReading(json: Readonly<Record<string, unknown>>): GatewayError | undefined {
  return misread(json, BODY, '');
}

function misread(value: unknown, read: ReadObject, path: string): GatewayError | undefined {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = misread(value[i], read, `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  for (const key of Object.keys(value)) {
    const at = path === '' ? key : `${path}.${key}`;
    if (read.keys.has(key)) {
      const inner = read.keys.get(key);
      const found = inner === undefined ? undefined : misread(value[key], inner, at);
      if (found !== undefined) return found;
      continue;
    }
    const meant = read.folded.get(foldCase(key));
    if (meant === undefined) continue;
    const meantAt = path === '' ? meant : `${path}.${meant}`;
    if (Object.hasOwn(value, meant)) {
      return badRequest(
        `body has ${JSON.stringify(at)} beside ${JSON.stringify(meantAt)}: a node whose JSON keys match case-insensitively may read either; send ${JSON.stringify(meantAt)} once`,
        meantAt,
      );
    }
    return badRequest(
      `body has ${JSON.stringify(at)}: a node whose JSON keys match case-insensitively reads it as ${JSON.stringify(meantAt)}, which the gateway reads to route, size and reserve the request; send it as ${JSON.stringify(meantAt)}`,
      meantAt,
    );
  }
  return undefined;
}
