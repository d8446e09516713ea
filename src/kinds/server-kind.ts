// The one plug point for a kind of inference server: what the gateway asks it and how it reads the
// answers. Mostly data and pure parsers; the I/O (bounded fetches) stays in the loops that use it
// (health probe, discovery, capacity poll, exact prompt size), which ask the kind what to fetch.

import type { InferenceEndpoint, NodeKind } from '#src/config/index.ts';
import type { JsonAnswer } from '#src/core/bounded-json.ts';
import type { ServerKvMode } from './llamacpp-kv.ts';
import type { LoadDialect } from './load-metrics.ts';
import type { ListedNames } from './model-names.ts';
import type { StreamUsage } from './stream-usage.ts';
import type { ModelOps } from './model-op-shapes.ts';
import type { ModelEventsDialect, ModelProgress } from './model-event-shapes.ts';

/** Per-model figures; `slots` undefined = the server batches itself (vLLM, SGLang) or did not say. */
export interface ModelContext {
  readonly nCtx: number;
  readonly slots: number | undefined;
}

/**
 * What a llama-server router says of itself on plain `GET /props` (PROTOCOLS.md §1.5):
 * `max_instances` is `--models-max` (0 = unlimited), `models_autoload` whether a request loads its model.
 */
export interface RouterLimits {
  readonly maxInstances: number | undefined;
  readonly autoload: boolean | undefined;
}

/** How a node answered its capacity request: llama.cpp's /props says router or single server. */
export type ServerRole = 'router' | 'single' | 'unknown';

/** What an error answer means to the gateway, whichever dialect it came in. */
export type RefusalMeaning =
  | {
      readonly kind: 'context_overflow';
      readonly nCtx: number | undefined;
      readonly promptTokens: number | undefined;
      readonly message: string;
    }
  | { readonly kind: 'model_not_found'; readonly message: string }
  /** A route-level 404 (or 405): the server has no such endpoint (an older release; endpoints.ts `routeMissing`). */
  | { readonly kind: 'endpoint_missing'; readonly message: string };

/** The answer to a kind's capacity request, read. */
export type CapacityAnswer =
  /** One model served; its figures are the host's. */
  | { readonly shape: 'single'; readonly host: ModelContext }
  /** Many models behind one port; each loaded one is asked with `perModel`. */
  | { readonly shape: 'router'; readonly limits?: RouterLimits }
  /** The answer lists the loaded models and their figures itself. */
  | { readonly shape: 'loaded'; readonly loadedIds: readonly string[]; readonly models: Readonly<Record<string, ModelContext>> };

export interface CapacityDialect {
  /** The GET that opens a poll. */
  readonly path: string;
  /** Its JSON answer read; undefined = unreadable (the node's figures stay unknown). */
  parse(body: unknown): CapacityAnswer | undefined;
  /** For a node that answers as a router: asking about one loaded model without loading it. */
  readonly perModel: PerModelDialect | undefined;
}

export interface PerModelDialect {
  path(modelId: string): string;
  parse(body: unknown): ModelContext | undefined;
}

export interface TokenizeRequest {
  /** Path and query of the POST. */
  readonly path: string;
  /** Its JSON body. */
  readonly body: Readonly<Record<string, unknown>>;
}

export interface TokenizeDialect {
  /** The request counting `text` with `model`'s own tokenizer. */
  request(model: string, text: string): TokenizeRequest;
  /** The token count in its JSON answer; undefined = unreadable. */
  count(body: unknown): number | undefined;
}

/** What a node answered to each GET of a detection probe; undefined = that path was not asked. */
export type ProbeAnswers = (path: string) => JsonAnswer | undefined;

/** A kind recognised from a node's own answers, and the answer that gave it away. */
export interface Detection {
  readonly kind: Exclude<NodeKind, 'auto'>;
  readonly role: ServerRole;
  /** For the operator: e.g. `GET /props says role "router"`. */
  readonly evidence: string;
}

/** How a kind is told apart from the others: GETs that never load a model, and a pure reading. */
export interface KindDetector {
  readonly paths: readonly string[];
  detect(answers: ProbeAnswers): Detection | undefined;
}

/** One model's figures on one node; `nCtx` > 0. */
export interface KvFigures {
  readonly nCtx: number;
  readonly slots: number | undefined;
  readonly mode: ServerKvMode;
}

/** How a node's concurrent requests share its KV cache, as the gateway budgets it (kv-pool.ts). */
export interface KvPool {
  /** Tokens all in-flight requests of the model may hold together; undefined = cannot be budgeted (slots unknown). */
  budget(figures: KvFigures): number | undefined;
  /** The context each of `slots` concurrent requests is guaranteed. */
  guaranteedCtx(figures: KvFigures): number;
}

/** What one listing entry says besides its id (listing-entry.ts); DiscoveredModel is this plus the id. */
export interface ListedEntry {
  /** False only for an entry whose status says it is not loaded (a llama.cpp router's). */
  readonly loaded: boolean;
  /** The entry's load status (llama.cpp router: "unloaded", "loading", "sleeping"…); undefined = none. */
  readonly status: string | undefined;
  /** The context the entry lists (per slot on llama.cpp); undefined = not listed. */
  readonly contextTokens: number | undefined;
  /** Other names the node resolves to this id, without the id itself. */
  readonly aliases: readonly string[];
  /** The KV mode its command line runs with (a router's `status.args`); absent = not said. */
  readonly kv?: ServerKvMode;
  /** A router's failed child (status `failed`): the exit code it died with. */
  readonly exitCode?: number;
  /** How far a load or download has come, from the router's pushed frames (the listing says nothing of it). */
  readonly progress?: ModelProgress;
}

/** How a decoder matches JSON object keys to the fields it reads (see ServerKind.jsonKeys). */
export type JsonKeyMatching = 'exact' | 'case-insensitive';

export interface ServerKind {
  readonly name: NodeKind;
  /** Health probe paths, tried in order; only a 404 moves on to the next (a 503 is final). */
  readonly healthPaths: readonly string[];
  /** The `GET /v1/models` body brought to the OpenAI list shape; most kinds return it as is. */
  normalizeListing(body: unknown): unknown;
  /** One entry of the normalised listing, with a non-empty string `id`, read (listing-entry.ts). Pure. */
  listingEntry(entry: Readonly<Record<string, unknown>>, id: string): ListedEntry;
  /** Where the node tells its context and slots; undefined = only the listing does. */
  readonly capacity: CapacityDialect | undefined;
  /** The node's own token counter; undefined = none we know (see `tokenizerFor` for detected ones). */
  readonly tokenize: TokenizeDialect | undefined;
  /** The gauges of its `/metrics` that tell its load; undefined = it exports none (Ollama). */
  readonly load: LoadDialect | undefined;
  /**
   * The GETs that read its load now (load-paths.ts), for a node whose capacity answer said `role`
   * with `loadedModels` loaded; asking them never loads a model. Undefined = nothing to ask yet, or
   * ever (no `load` gauges). Pure.
   */
  loadPaths(role: ServerRole, loadedModels: readonly string[]): readonly string[] | undefined;
  /**
   * How its requests share the KV cache the gateway budgets (kv-pool.ts), by the role its capacity
   * answer gave; undefined = the server manages its cache itself (no budget). Pure.
   */
  kvPool(role: ServerRole): KvPool | undefined;
  /**
   * A prompt longer than the context is cut silently (Ollama drops old messages at `num_ctx`) instead
   * of refused: such a node is sent a prompt that may not fit only when no node surely fits and no
   * node that would refuse it can take it (see `truncatesSilently`).
   */
  readonly silentlyTruncates: boolean;
  /** Whether its streams state their usage unasked, and what asking adds (stream-usage.ts; see `streamUsageFor`). */
  readonly streamUsage: StreamUsage;
  /**
   * How its JSON decoder matches a body's keys to the fields it reads (json-keys.ts): `exact` (a
   * `"Model"` is another key, ignored), or `case-insensitive` (Go's encoding/json: `"Model"` and
   * `"MODEL"` fill `model`, the last one read wins). A kind whose decoder is not known declares the
   * loosest. The gateway refuses a body whose `model` such a decoder could read otherwise.
   */
  readonly jsonKeys: JsonKeyMatching;
  /**
   * The listed id a request naming `requested` is served as, resolved the way this kind of server
   * resolves names (model-names.ts); undefined = the node would not take the name. The gateway
   * sends the node that id. Pure.
   */
  resolveModelName(requested: string, listed: ListedNames): string | undefined;
  /** An error answer (status, parsed JSON body) read in this kind's dialect. */
  refusal(status: number, body: unknown): RefusalMeaning | undefined;
  /** Recognising a node of this kind (`switchyard init`); `auto` tries every kind in its order. */
  readonly detector: KindDetector;
  /** The inference endpoints its current release serves (endpoint-sets.ts); `[[nodes]] endpoints` replaces them. */
  readonly endpoints: readonly InferenceEndpoint[];
  /**
   * Loading and unloading a model on request (model-ops.ts), for a node whose capacity answer said
   * `role`; undefined = this kind (or role) cannot. Pure.
   */
  modelOps(role: ServerRole): ModelOps | undefined;
  /**
   * The stream of pushed model state (a llama-server router's `/models/sse`, llamacpp-events.ts), for
   * a node whose capacity answer said `role`; undefined = none (the listing poll alone tells). Pure.
   */
  modelEvents(role: ServerRole): ModelEventsDialect | undefined;
}
