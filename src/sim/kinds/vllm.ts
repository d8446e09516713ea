// A vLLM OpenAI server (PROTOCOLS.md §2): one card per served model, empty-body /health, /version,
// /load, /tokenize, `vllm:` metrics per model_name, 404 NotFoundError for unknown models, FastAPI's
// {"detail": ...} for unknown routes, and `{"error":"Unauthorized"}` on /v1 paths with a bad key.

import type { EndpointClass, KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody, type InferenceTarget } from '#src/sim/inference.ts';
import { OPENAI_INFERENCE_PATHS } from '#src/sim/openai-surface.ts';
import { createModelEngine } from '#src/sim/model-engine.ts';
import { renderPrometheus, type MetricFamily } from '#src/sim/prometheus-text.ts';
import { jsonReply, textReply, type Reply } from '#src/sim/reply.ts';
import { hexId } from '#src/sim/seeded-random.ts';
import { chatPromptTokens, textPromptTokens, tokenId, tokenIds, tokenize } from '#src/sim/tokenizer.ts';
import { formFields, rerankAnswer, scoreAnswer, transcriptionReply } from '#src/sim/pooling-audio.ts';
import { VLLM_JSON_HEADERS, vllmDialect, vllmError, vllmJson } from '#src/sim/kinds/vllm-dialect.ts';

/** A release that serves every route this simulator answers (`/v1/messages` from 0.11.1). */
export const VLLM_VERSION = '0.26.0';

/** vLLM's pooling and speech-to-text routes (answered by pooling-audio.ts). */
const POOLING_AUDIO_PATHS: readonly string[] = [
  '/rerank',
  '/v1/rerank',
  '/v2/rerank',
  '/score',
  '/v1/score',
  '/v1/audio/transcriptions',
  '/v1/audio/translations',
];

/** Known paths and their methods; another method on a known path is FastAPI's 405. */
const ROUTES: Readonly<Record<string, readonly string[]>> = {
  '/health': ['GET'],
  '/ping': ['GET', 'POST'],
  '/v1/models': ['GET'],
  '/version': ['GET'],
  '/load': ['GET'],
  '/tokenize': ['POST'],
  '/metrics': ['GET'],
  ...Object.fromEntries([...Object.keys(OPENAI_INFERENCE_PATHS), ...POOLING_AUDIO_PATHS].map((path) => [path, ['POST']])),
};

function classify(method: string, path: string): EndpointClass {
  if (method === 'POST' && (OPENAI_INFERENCE_PATHS[path] !== undefined || POOLING_AUDIO_PATHS.includes(path))) return 'inference';
  if (method === 'GET' && path === '/v1/models') return 'models';
  if (path === '/health' || path === '/ping') return 'health';
  return 'other';
}

const emptyBody = (status: number): Reply => textReply(status, '', { server: 'uvicorn' });

/** Id of the template tokens (role headers, end markers) in a tokenized chat. */
const TEMPLATE_TOKEN_ID = 2;

/** `/tokenize` with `prompt` or `messages`: token ids (padded with template ids for chat). */
function tokenizeAnswer(body: Readonly<Record<string, unknown>>, maxModelLen: number): unknown {
  const messages = body['messages'];
  let tokens: number[];
  let pieces: string[];
  if (Array.isArray(messages)) {
    const count = chatPromptTokens(messages);
    const texts = messages.map((m: unknown) =>
      typeof m === 'object' && m !== null && 'content' in m && typeof m.content === 'string' ? m.content : '',
    );
    pieces = texts.flatMap(tokenize).slice(0, count);
    tokens = pieces.map(tokenId);
    while (tokens.length < count) tokens.push(TEMPLATE_TOKEN_ID);
  } else {
    const prompt = body['prompt'];
    pieces = typeof prompt === 'string' ? tokenize(prompt) : [];
    tokens =
      typeof prompt === 'string' ? tokenIds(prompt) : Array.from({ length: textPromptTokens(prompt) }, () => TEMPLATE_TOKEN_ID);
  }
  return {
    count: tokens.length,
    max_model_len: maxModelLen,
    tokens,
    token_strs: body['return_token_strs'] === true ? pieces : null,
  };
}

export function vllmHandler(context: KindContext): KindHandler {
  const { node, clock, random } = context;
  const dialect = vllmDialect(random);
  const targets: InferenceTarget[] = node.models.map((model) => ({
    model,
    reportedModel: model.id,
    engine: createModelEngine(node, model, clock),
  }));
  const nowSec = (): number => Math.floor(clock.now() / 1000);

  /** A model's `aliases` are more `--served-model-name`s of the same engine: one card each, one root. */
  const servedNames = (target: InferenceTarget): readonly string[] => [target.model.id, ...target.model.aliases];
  const modelCard = (target: InferenceTarget, name: string, created: number): Record<string, unknown> => ({
    id: name,
    object: 'model',
    created,
    owned_by: 'vllm',
    root: target.model.id,
    parent: null,
    max_model_len: target.model.contextTokens,
    permission: [
      {
        id: `modelperm-${hexId(random, 32)}`,
        object: 'model_permission',
        created,
        allow_create_engine: false,
        allow_sampling: true,
        allow_logprobs: true,
        allow_search_indices: false,
        allow_view: true,
        allow_fine_tuning: false,
        organization: '*',
        group: null,
        is_blocking: false,
      },
    ],
  });

  /** The served model the body names (the first one when it names none); undefined once answered. */
  function targetFor(exchange: SimExchange, body: Readonly<Record<string, unknown>>): InferenceTarget | undefined {
    const name = body['model'];
    // Any served name reaches the engine; answers name the first one (vLLM's `model_name()`).
    const target = typeof name === 'string' ? targets.find((t) => servedNames(t).includes(name)) : targets[0];
    if (target === undefined) {
      exchange.writer.reply(vllmError(404, 'NotFoundError', `The model \`${String(name)}\` does not exist.`, 'model'));
    }
    return target;
  }

  function metrics(): Reply {
    const family = (
      name: string,
      help: string,
      type: 'counter' | 'gauge',
      value: (t: InferenceTarget) => number,
    ): MetricFamily => ({
      name,
      help,
      type,
      samples: targets.map((t) => ({ labels: { model_name: t.model.id, engine: '0' }, value: value(t) })),
    });
    const success: MetricFamily = {
      name: 'vllm:request_success_total',
      help: 'Count of successfully processed requests.',
      type: 'counter',
      samples: targets.flatMap((t) => [
        { labels: { model_name: t.model.id, engine: '0', finished_reason: 'stop' }, value: t.engine.counters().finishedStop },
        { labels: { model_name: t.model.id, engine: '0', finished_reason: 'length' }, value: t.engine.counters().finishedLength },
      ]),
    };
    const text = renderPrometheus([
      family('vllm:num_requests_running', 'Number of requests in model execution batches.', 'gauge', (t) =>
        t.engine.processingCount(),
      ),
      family('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', 'gauge', (t) => t.engine.waitingCount()),
      family('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', 'gauge', (t) => t.engine.kvUsageRatio()),
      family(
        'vllm:prompt_tokens_total',
        'Number of prefill tokens processed.',
        'counter',
        (t) => t.engine.counters().promptTokensTotal,
      ),
      family(
        'vllm:generation_tokens_total',
        'Number of generation tokens processed.',
        'counter',
        (t) => t.engine.counters().generatedTokensTotal,
      ),
      success,
    ]);
    return textReply(200, text, { server: 'uvicorn', 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
  }

  /** Rerank and score (JSON), transcriptions and translations (a multipart form). */
  function poolingOrAudio(exchange: SimExchange): void {
    const { path, writer } = exchange;
    const created = nowSec();
    if (path.startsWith('/v1/audio/')) {
      const form = formFields(exchange);
      if (form === undefined)
        return writer.reply(
          vllmJson(400, { error: { message: 'expected multipart/form-data', type: 'BadRequestError', param: null, code: 400 } }),
        );
      const target = targetFor(exchange, form.fields);
      if (target === undefined) return;
      const task = path.endsWith('translations') ? 'translate' : 'transcribe';
      writer.reply(
        transcriptionReply(
          form,
          { id: `${task === 'translate' ? 'trsl' : 'trsc'}-${hexId(random, 32)}`, model: target.model.id, created },
          task,
        ),
      );
      return;
    }
    const body = jsonObjectBody(exchange, dialect);
    const target = body === undefined ? undefined : targetFor(exchange, body);
    if (body === undefined || target === undefined) return;
    const meta = { id: `${path.endsWith('score') ? 'score' : 'rerank'}-${hexId(random, 32)}`, model: target.model.id, created };
    const answer = path.endsWith('score') ? scoreAnswer(body, meta) : rerankAnswer('vllm', body, meta);
    writer.reply(answer.ok ? vllmJson(200, answer.json) : vllmError(400, 'BadRequestError', answer.message));
  }

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    if (node.apiKey !== undefined && path.startsWith('/v1') && exchange.headers['authorization'] !== `Bearer ${node.apiKey}`) {
      writer.reply(jsonReply(401, { error: 'Unauthorized' }, VLLM_JSON_HEADERS));
      return;
    }
    const allowed = ROUTES[path];
    if (allowed === undefined || !allowed.includes(method)) {
      writer.reply(
        vllmJson(allowed === undefined ? 404 : 405, { detail: allowed === undefined ? 'Not Found' : 'Method Not Allowed' }),
      );
      return;
    }
    if (POOLING_AUDIO_PATHS.includes(path)) return poolingOrAudio(exchange);
    const endpoint = method === 'POST' ? OPENAI_INFERENCE_PATHS[path] : undefined;
    if (endpoint !== undefined || path === '/tokenize') {
      const body = jsonObjectBody(exchange, dialect);
      const target = body === undefined ? undefined : targetFor(exchange, body);
      if (body === undefined || target === undefined) return;
      if (endpoint === undefined) writer.reply(vllmJson(200, tokenizeAnswer(body, target.model.contextTokens)));
      else await handleInference(exchange, endpoint, body, target, dialect, clock);
      return;
    }
    switch (path) {
      case '/health':
      case '/ping':
        writer.reply(emptyBody(200));
        return;
      case '/v1/models': {
        const created = nowSec();
        writer.reply(
          vllmJson(200, {
            object: 'list',
            data: targets.flatMap((t) => servedNames(t).map((name) => modelCard(t, name, created))),
          }),
        );
        return;
      }
      case '/version':
        writer.reply(vllmJson(200, { version: node.version ?? VLLM_VERSION }));
        return;
      case '/load':
        writer.reply(
          vllmJson(200, { server_load: targets.reduce((n, t) => n + t.engine.processingCount() + t.engine.waitingCount(), 0) }),
        );
        return;
      default:
        writer.reply(metrics());
    }
  }

  return {
    classify,
    faultReplies: {
      internalError: () => vllmError(500, 'InternalServerError', 'simulated internal error'),
      healthFailure: () => emptyBody(503),
      emptyModels: () => vllmJson(200, { object: 'list', data: [] }),
    },
    handle,
    modelIds: () => targets.flatMap(servedNames),
    close: () => {
      for (const target of targets) target.engine.close();
    },
  };
}
