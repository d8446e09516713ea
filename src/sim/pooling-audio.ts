// What the servers answer on rerank, score and audio transcription (docs/protocols-endpoints.md):
// vLLM's and llama-server's rerank `results: [{index, relevance_score}]` (best first, `top_n`),
// vLLM's score `data: [{index, object: "score", score}]`, and vLLM's transcription in each
// `response_format` (`json` → {"text"}, `text`, `verbose_json`, and `stream=true` as SSE chunks
// ending with `[DONE]`). Scores are word overlap of query and document: deterministic, and a
// relevant document ranks first.

import type { SimExchange } from '#src/sim/exchange.ts';
import { isRecord } from '#src/core/is-record.ts';
import { jsonReply, textReply, type Reply } from '#src/sim/reply.ts';
import { textPromptTokens } from '#src/sim/tokenizer.ts';

export type RerankStyle = 'vllm' | 'llamacpp';

function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w !== ''),
  );
}

/** Word overlap of two texts in [0, 1], rounded as a float32 score would print. */
export function overlapScore(query: string, document: string): number {
  const q = words(query);
  if (q.size === 0) return 0;
  let shared = 0;
  for (const word of words(document)) if (q.has(word)) shared += 1;
  return Math.round((shared / q.size) * 1e6) / 1e6;
}

function documentText(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  return isRecord(item) && typeof item.text === 'string' ? item.text : undefined;
}

/** A rerank answer, or a 400 message naming the missing field. */
export function rerankAnswer(
  style: RerankStyle,
  body: Readonly<Record<string, unknown>>,
  meta: { id: string; model: string },
): { ok: true; json: unknown } | { ok: false; message: string } {
  const query = body['query'];
  const documents = body['documents'] ?? (style === 'llamacpp' ? body['texts'] : undefined);
  if (typeof query !== 'string') return { ok: false, message: '"query" must be provided' };
  if (!Array.isArray(documents) || documents.length === 0)
    return { ok: false, message: '"documents" must be a non-empty string array' };
  const texts = documents.map((d) => documentText(d) ?? '');
  const ranked = texts
    .map((text, index) => ({ index, text, score: overlapScore(query, text) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
  const topN = body['top_n'];
  const kept = typeof topN === 'number' && Number.isInteger(topN) && topN > 0 ? ranked.slice(0, topN) : ranked;
  const promptTokens = texts.reduce((n, text) => n + textPromptTokens(query) + textPromptTokens(text), 0);
  const withText = style === 'vllm' ? body['return_documents'] !== false : body['return_documents'] === true;
  const results = kept.map((r) => ({
    index: r.index,
    ...(withText ? { document: { text: r.text } } : {}),
    relevance_score: r.score,
  }));
  if (style === 'llamacpp')
    return {
      ok: true,
      json: { model: meta.model, object: 'list', usage: { prompt_tokens: promptTokens, total_tokens: promptTokens }, results },
    };
  return {
    ok: true,
    json: { id: meta.id, model: meta.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens }, results },
  };
}

/** vLLM's score: `text_1` against each `text_2` (or `queries` against `documents`). */
export function scoreAnswer(
  body: Readonly<Record<string, unknown>>,
  meta: { id: string; model: string; created: number },
): { ok: true; json: unknown } | { ok: false; message: string } {
  const first = body['text_1'] ?? body['queries'];
  const second = body['text_2'] ?? body['documents'];
  const lefts = typeof first === 'string' ? [first] : Array.isArray(first) ? first.map((x) => documentText(x) ?? '') : undefined;
  const rights =
    typeof second === 'string' ? [second] : Array.isArray(second) ? second.map((x) => documentText(x) ?? '') : undefined;
  if (lefts === undefined || rights === undefined || lefts.length === 0 || rights.length === 0)
    return { ok: false, message: 'text_1 and text_2 must be given' };
  if (lefts.length !== 1 && lefts.length !== rights.length)
    return { ok: false, message: 'text_1 must hold one text or as many as text_2' };
  const pairs = rights.map((right, i) => [lefts.length === 1 ? (lefts[0] ?? '') : (lefts[i] ?? ''), right] as const);
  const promptTokens = pairs.reduce((n, [a, b]) => n + textPromptTokens(a) + textPromptTokens(b), 0);
  const data = pairs.map(([a, b], index) => ({ index, object: 'score', score: overlapScore(a, b) }));
  return {
    ok: true,
    json: {
      id: meta.id,
      object: 'list',
      created: meta.created,
      model: meta.model,
      data,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens, completion_tokens: 0 },
    },
  };
}

export interface FormFields {
  readonly fields: Readonly<Record<string, string>>;
  /** Bytes of the `file` part, or undefined when there is none. */
  readonly fileBytes: number | undefined;
}

/** A multipart body's text fields and its file's size (the sim reads what a FastAPI Form() would). */
export function formFields(exchange: SimExchange): FormFields | undefined {
  const contentType = String(exchange.headers['content-type'] ?? '');
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const delimiter = boundary?.[1] ?? boundary?.[2];
  const body = exchange.body;
  if (delimiter === undefined || body.kind !== 'invalid') return undefined;
  const fields: Record<string, string> = {};
  let fileBytes: number | undefined;
  for (const part of body.text.split(`--${delimiter}`).slice(1)) {
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) continue;
    const headers = part.slice(0, split);
    const value = part.slice(split + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (name === undefined) continue;
    if (/filename=/i.test(headers)) fileBytes = Buffer.byteLength(value, 'utf8');
    else if (!Object.hasOwn(fields, name)) fields[name] = value;
  }
  return { fields, fileBytes };
}

/** The words a simulated transcript says for an audio of this size (a few words per kilobyte). */
function transcriptOf(fileBytes: number): string {
  const spoken = ['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'a', 'lazy', 'dog'];
  const count = Math.max(1, Math.min(40, Math.ceil(fileBytes / 1024)));
  return Array.from({ length: count }, (_, i) => spoken[i % spoken.length]).join(' ');
}

const UVICORN_JSON: Readonly<Record<string, string>> = Object.freeze({ 'content-type': 'application/json', server: 'uvicorn' });
const SSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream; charset=utf-8',
  server: 'uvicorn',
});

/** vLLM's transcription (or translation) answer for a form with its audio file. */
export function transcriptionReply(
  form: FormFields,
  meta: { id: string; model: string; created: number },
  task: 'transcribe' | 'translate',
): Reply {
  if (form.fileBytes === undefined) {
    return jsonReply(
      422,
      { detail: [{ type: 'missing', loc: ['body', 'file'], msg: 'Field required', input: null }] },
      UVICORN_JSON,
    );
  }
  const text = transcriptOf(form.fileBytes);
  const seconds = Math.max(1, Math.round(form.fileBytes / 32_000));
  const format = form.fields['response_format'] ?? 'json';
  if (form.fields['stream'] === 'true') {
    const object = task === 'transcribe' ? 'transcription.chunk' : 'translation.chunk';
    const chunk = (content: string, finish: string | null): string =>
      `data: ${JSON.stringify({ id: meta.id, object, created: meta.created, model: meta.model, choices: [{ delta: { content }, finish_reason: finish, stop_reason: null }] })}\n\n`;
    const pieces = text.split(' ').map((word, i) => chunk(i === 0 ? word : ` ${word}`, null));
    return textReply(200, `${pieces.join('')}${chunk('', 'stop')}data: [DONE]\n\n`, SSE_HEADERS);
  }
  if (format === 'text') return textReply(200, text, { 'content-type': 'text/plain; charset=utf-8', server: 'uvicorn' });
  if (format === 'verbose_json') {
    const language = form.fields['language'] ?? 'en';
    return jsonReply(
      200,
      {
        task,
        language,
        duration: seconds,
        text,
        segments: [
          {
            id: 0,
            seek: 0,
            start: 0,
            end: seconds,
            text,
            tokens: [],
            temperature: 0,
            avg_logprob: 0,
            compression_ratio: 1,
            no_speech_prob: 0,
          },
        ],
      },
      UVICORN_JSON,
    );
  }
  if (format !== 'json')
    return jsonReply(
      400,
      { error: { message: `Unsupported response_format: ${format}`, type: 'BadRequestError', param: null, code: 400 } },
      UVICORN_JSON,
    );
  return jsonReply(200, { text, usage: { type: 'duration', seconds } }, UVICORN_JSON);
}
