// How a kind's streamed answers state the tokens they used (docs/tenants.md, "Usage accounting").
// OpenAI's surface sends a stream's usage only when the request asks (`stream_options.include_usage`);
// some servers state it anyway. The gateway asks a node that would otherwise say nothing, and then
// takes out of the client's stream what asking added: the extra usage chunk, and the `"usage":null`
// some servers then add to every other chunk. Pure data, read by the request path.

export interface StreamUsage {
  /** The endpoints whose streams state no usage unless asked: the gateway asks for it. */
  readonly askOn: readonly string[];
  /**
   * Asked, the server also puts `"usage":null` on every other chunk (OpenAI itself, vLLM before
   * 0.6): removed again. False where the nulls never come, or come whether asked or not (SGLang
   * writes every field of a chunk), so removing them would change what the client gets.
   */
  readonly nullsWhenAsked: boolean;
}

/** The OpenAI endpoints whose streams carry usage only when asked. */
export const ASK_ON_OPENAI_STREAMS: readonly string[] = Object.freeze(['/v1/chat/completions', '/v1/completions']);

/** The streams of the OpenAI surface: asked on both endpoints, no nulls added (Ollama, current vLLM). */
export const ASKED_NO_NULLS: StreamUsage = Object.freeze({ askOn: ASK_ON_OPENAI_STREAMS, nullsWhenAsked: false });

/** OpenAI's own streams (and vLLM's older ones): asked, and `"usage":null` then on every other chunk. */
export const ASKED_WITH_NULLS: StreamUsage = Object.freeze({ askOn: ASK_ON_OPENAI_STREAMS, nullsWhenAsked: true });
