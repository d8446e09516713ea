// The contract of one API translation: a client speaking one API (Anthropic Messages, OpenAI
// Responses) served by a node that speaks only another (OpenAI Chat Completions). A translation is
// pure: plain JSON in, plain JSON or SSE text out; the request plane's translation feature
// (src/proxy/translate/) decides when one is used (only when no node for the model speaks the
// client's API natively: never silently), sends the translated body, and writes what the
// translation makes of the node's answer. Every translation passes one contract suite
// (test/contract/translation.contract.ts); what each loses is listed in docs/protocols-endpoints.md.

import type { InferenceEndpoint } from '#src/config/index.ts';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

/** What a translation may read of the request beyond its body: stable ids and times (injected clock). */
export interface TranslationContext {
  /** The gateway's request id: the client's answer ids derive from it (`msg_…`, `resp_…`). */
  readonly requestId: string;
  /** The model the client asked for (its name, as the client should see it in the answer). */
  readonly model: string;
  /** Seconds since the epoch, from the gateway's clock (`created`, `created_at`). */
  readonly nowSeconds: number;
}

/** A request that cannot be carried to the node: the client gets 400 naming `field`. */
export interface Untranslatable {
  readonly kind: 'untranslatable';
  /** The request field (a key path, e.g. `messages[2].content[0].type`) and why. */
  readonly field: string;
  readonly message: string;
}

/** The node's request: its body, and what the answer's translation must remember of the client's request. */
export interface TranslatedRequest {
  readonly kind: 'translated';
  /** The body sent to the node's endpoint (with `stream_options.include_usage` on a stream: usage is always asked). */
  readonly body: JsonObject;
  /** Whether the client asked for a stream (the node is asked for one exactly then). */
  readonly stream: boolean;
  /** Opaque to the gateway: what `answer`, `stream` and `error` need of the request (tool names, the thinking budget asked). */
  readonly memo: unknown;
}

/** One event-stream translator, made for one answer: the node's SSE events in, the client's SSE text out. */
export interface StreamTranslator {
  /**
   * One node event's `data` (without `data: `, `[DONE]` included) → zero or more whole client
   * events, as SSE text (`event: …\ndata: …\n\n`), ready to write.
   */
  event(data: string): string;
  /** The node's stream ended (after `[DONE]` or without it): the closing events the client is still owed. */
  end(): string;
  /** The stream broke after the client had bytes: the client API's terminal error event. */
  fail(message: string): string;
}

/** The node's token counts, for the gateway's usage report (the client's answer carries its own). */
export interface TranslatedUsage {
  readonly promptTokens?: number | undefined;
  readonly completionTokens?: number | undefined;
}

export interface Translation {
  /** For logs, metrics, explain and the `x-switchyard-translated` header: e.g. `messages→chat`. */
  readonly name: string;
  /** The client's endpoint. */
  readonly client: InferenceEndpoint;
  /** The endpoint the node speaks. */
  readonly node: InferenceEndpoint;
  /** The client's body → the node's, or why it cannot be carried. */
  request(body: JsonObject, context: TranslationContext): TranslatedRequest | Untranslatable;
  /** The node's whole 2xx JSON answer → the client's. */
  answer(nodeAnswer: JsonObject, memo: unknown, context: TranslationContext): JsonObject;
  /** A translator for the node's event stream (one per answer). */
  stream(memo: unknown, context: TranslationContext): StreamTranslator;
  /** The node's error answer (its status, its parsed body or undefined) → the client's error body. */
  error(status: number, nodeBody: unknown): JsonObject;
}
