// Pure: how a server maps the `model` a request names to one of the models it lists — the rules
// behind `ServerKind.resolveModelName`. The gateway then sends that node the id it listed, so a
// name the node itself would accept routes, and the node always gets a name it knows.

/** One model as a node listed it, as far as its names go (discovery's DiscoveredModel fits). */
export interface ListedName {
  readonly id: string;
  /** Other names the node resolves to this id (a llama-server's `aliases`), without the id. */
  readonly aliases: readonly string[];
}

/** A node's listing by id (NodeView.modelsById fits). */
export type ListedNames = ReadonlyMap<string, ListedName>;

/** The default: the server accepts exactly the ids it lists (vLLM lists one card per `--served-model-name`). */
export function exactName(requested: string, listed: ListedNames): string | undefined {
  return listed.has(requested) ? requested : undefined;
}

/**
 * llama-server (a router's `router_validate_model`, a single server's `--alias` set): an id, or
 * an alias of exactly one listed id (an alias two models claim is ambiguous and resolves to none).
 */
export function aliasedName(requested: string, listed: ListedNames): string | undefined {
  if (listed.has(requested)) return requested;
  let found: string | undefined;
  for (const model of listed.values()) {
    if (!model.aliases.includes(requested)) continue;
    if (found !== undefined) return undefined;
    found = model.id;
  }
  return found;
}

const OLLAMA_HOST = 'registry.ollama.ai';
const OLLAMA_NAMESPACE = 'library';
const OLLAMA_TAG = 'latest';

/**
 * Ollama's reading of a name (`model.ParseName`): `[host/][namespace/]model[:tag][@digest]`, with
 * the parts left out filled in — host `registry.ollama.ai`, namespace `library`, tag `latest` —
 * so `llama3.2`, `llama3.2:latest` and `registry.ollama.ai/library/llama3.2:latest` name one model.
 * Undefined: not a name Ollama could parse (empty parts, more than three path parts).
 */
export function ollamaFullName(name: string): string | undefined {
  const at = name.indexOf('@');
  const withoutDigest = at === -1 ? name : name.slice(0, at);
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const hasTag = colon > slash;
  const path = hasTag ? withoutDigest.slice(0, colon) : withoutDigest;
  const tag = hasTag ? withoutDigest.slice(colon + 1) : OLLAMA_TAG;
  const parts = path.split('/');
  if (tag === '' || parts.length > 3 || parts.some((part) => part === '')) return undefined;
  const [host, namespace, model] =
    parts.length === 3 ? parts : parts.length === 2 ? [OLLAMA_HOST, ...parts] : [OLLAMA_HOST, OLLAMA_NAMESPACE, ...parts];
  return `${host}/${namespace}/${model}:${tag}`;
}

/** Ollama: the listed id that names the same model once both names are filled in (`llama3.2` → `llama3.2:latest`). */
export function ollamaName(requested: string, listed: ListedNames): string | undefined {
  if (listed.has(requested)) return requested;
  const wanted = ollamaFullName(requested);
  if (wanted === undefined) return undefined;
  for (const id of listed.keys()) if (ollamaFullName(id) === wanted) return id;
  return undefined;
}
