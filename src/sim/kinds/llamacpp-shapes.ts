// llama-server's non-inference answers (PROTOCOLS.md §1, §7): headers, error bodies (each with its
// own key order), model cards, /props, /slots and /metrics. Shared by the single server and the
// router.

import type { ModelEngine } from '#src/sim/model-engine.ts';
import { renderPrometheus } from '#src/sim/prometheus-text.ts';
import { jsonReply, textReply, type Reply } from '#src/sim/reply.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import { EMBEDDING_DIMENSIONS } from '#src/sim/synthetic-output.ts';

export const LLAMA_BUILD_INFO = 'b10587-3f545bec';

const BASE_HEADERS: Readonly<Record<string, string>> = { Server: 'llama.cpp', 'Access-Control-Allow-Origin': '' };
export const LLAMA_JSON_HEADERS: Readonly<Record<string, string>> = {
  ...BASE_HEADERS,
  'Content-Type': 'application/json; charset=utf-8',
};
export const LLAMA_SSE_HEADERS: Readonly<Record<string, string>> = {
  ...BASE_HEADERS,
  'Content-Type': 'text/event-stream',
  'X-Accel-Buffering': 'no',
};
const LLAMA_ERROR_HEADERS: Readonly<Record<string, string>> = { ...LLAMA_JSON_HEADERS, Connection: 'close' };

export function llamaJson(status: number, body: unknown): Reply {
  return jsonReply(status, body, status >= 400 ? LLAMA_ERROR_HEADERS : LLAMA_JSON_HEADERS);
}

/** `format_error_response`: {"error":{"code","message","type", ...extra}}. */
export function llamaError(status: number, type: string, message: string, extra: Readonly<Record<string, number>> = {}): Reply {
  return llamaJson(status, { error: { code: status, message, type, ...extra } });
}

/** The HTTP layer's own bodies put `message` first and `code` last. */
function llamaHttpError(status: number, message: string, type: string): Reply {
  return llamaJson(status, { error: { message, type, code: status } });
}

export const llamaNotFound = (): Reply => llamaHttpError(404, 'File Not Found', 'not_found_error');
export const llamaLoading = (): Reply => llamaHttpError(503, 'Loading model', 'unavailable_error');
export const llamaUnauthorized = (): Reply => llamaHttpError(401, 'Invalid API Key', 'authentication_error');
export const llamaHealthy = (): Reply => llamaJson(200, { status: 'ok' });
export const llamaInvalidRequest = (message: string): Reply => llamaError(400, 'invalid_request_error', message);
export const llamaMetricsDisabled = (): Reply =>
  llamaError(501, 'not_supported_error', 'This server does not support metrics endpoint. Start it with `--metrics`');

/** Paths that skip the API-key check. */
const PUBLIC_PATHS: ReadonlySet<string> = new Set(['/health', '/v1/health', '/models', '/v1/models', '/']);

export function llamaKeyAccepted(apiKey: string | undefined, path: string, headers: Readonly<Record<string, unknown>>): boolean {
  if (apiKey === undefined || PUBLIC_PATHS.has(path)) return true;
  const authorization = headers['authorization'];
  const bearer = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  return bearer === apiKey || headers['x-api-key'] === apiKey;
}

/** A stable parameter count for a model of `sizeBytes` (about 4.85 bits per weight, as Q4_K_M). */
function parameterCount(sizeBytes: number): number {
  return Math.round((sizeBytes * 8) / 4.85);
}

export function llamaModelMeta(model: ResolvedModel): Record<string, unknown> {
  return {
    vocab_type: true,
    n_vocab: 32_000,
    n_ctx: model.contextTokens,
    n_ctx_train: Math.max(model.contextTokens, 131_072),
    n_embd: EMBEDDING_DIMENSIONS,
    n_params: parameterCount(model.sizeBytes),
    size: model.sizeBytes,
    ftype: 'Q4_K - Medium',
  };
}

/** The single server's /v1/models: an Ollama-style `models` array, then the OpenAI list. */
export function llamaSingleModelList(model: ResolvedModel | undefined, createdSec: number): Record<string, unknown> {
  const models =
    model === undefined
      ? []
      : [
          {
            name: model.id,
            model: model.id,
            modified_at: '',
            size: '',
            digest: '',
            type: 'model',
            description: '',
            tags: [''],
            capabilities: ['completion'],
            parameters: '',
            details: {
              parent_model: '',
              format: 'gguf',
              family: '',
              families: [''],
              parameter_size: '',
              quantization_level: '',
            },
          },
        ];
  const data =
    model === undefined
      ? []
      : [
          {
            id: model.id,
            aliases: [model.id, ...model.aliases],
            tags: [],
            object: 'model',
            created: createdSec,
            owned_by: 'llamacpp',
            meta: llamaModelMeta(model),
          },
        ];
  return { models, object: 'list', data };
}

const CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}";

/** The single server's (or a router child's) /props. */
export function llamaProps(model: ResolvedModel, metricsEnabled: boolean, isSleeping: boolean): Record<string, unknown> {
  return {
    default_generation_settings: {
      params: {
        seed: 4_294_967_295,
        temperature: 0.8,
        top_k: 40,
        top_p: 0.95,
        min_p: 0.05,
        n_predict: -1,
        n_keep: 0,
        stream: false,
      },
      n_ctx: model.contextTokens,
    },
    total_slots: model.slots,
    model_alias: model.id,
    model_ftype: 'Q4_K - Medium',
    model_path: `models/${model.id}.gguf`,
    modalities: { vision: false, video: false, audio: false },
    media_marker: '<__media__>',
    endpoint_slots: true,
    endpoint_props: false,
    endpoint_metrics: metricsEnabled,
    ui: true,
    ui_settings: {},
    chat_template: CHAT_TEMPLATE,
    chat_template_caps: { supports_string_content: true, supports_system_role: true, supports_tools: false },
    bos_token: '<s>',
    eos_token: '</s>',
    build_info: LLAMA_BUILD_INFO,
    is_sleeping: isSleeping,
    cors_proxy_enabled: false,
  };
}

export function llamaRouterProps(modelsMax: number, autoload: boolean): Record<string, unknown> {
  return {
    role: 'router',
    max_instances: modelsMax,
    models_autoload: autoload,
    model_alias: 'llama-server',
    model_path: 'none',
    default_generation_settings: { params: null, n_ctx: 0 },
    ui_settings: {},
    build_info: LLAMA_BUILD_INFO,
    cors_proxy_enabled: false,
  };
}

/** GET /slots; `?fail_on_no_slot=1` with every slot busy is a 503. */
export function llamaSlots(engine: ModelEngine, query: Readonly<Record<string, string>>): Reply {
  if ((query['fail_on_no_slot'] === '1' || query['fail_on_no_slot'] === 'true') && !engine.hasIdleSlot()) {
    return llamaError(503, 'unavailable_error', 'no slot available');
  }
  const slots = engine.slotViews().map((slot) => ({
    id: slot.id,
    n_ctx: engine.settings.contextTokens,
    speculative: false,
    is_processing: slot.isProcessing,
    ...(slot.lastTaskId === undefined
      ? {}
      : {
          id_task: slot.lastTaskId,
          n_prompt_tokens: slot.lastPromptTokens,
          next_token: [{ has_next_token: slot.isProcessing, has_new_line: false, n_remain: -1, n_decoded: slot.generatedTokens }],
        }),
  }));
  return llamaJson(200, slots);
}

export function llamaMetrics(engine: ModelEngine, processStartSec: number): Reply {
  const c = engine.counters();
  const perSecond = (tokens: number, ms: number): number => (ms > 0 ? (tokens * 1000) / ms : 0);
  const counter = (name: string, help: string, value: number) => ({
    name: `llamacpp:${name}`,
    help,
    type: 'counter' as const,
    samples: [{ value }],
  });
  const gauge = (name: string, help: string, value: number) => ({
    name: `llamacpp:${name}`,
    help,
    type: 'gauge' as const,
    samples: [{ value }],
  });
  const text = renderPrometheus([
    counter('prompt_tokens_total', 'Number of prompt tokens processed.', c.promptTokensTotal),
    counter('prompt_tokens_cached_total', 'Number of prompt tokens served from the cache.', 0),
    counter('prompt_seconds_total', 'Prompt process time', c.promptMsTotal / 1000),
    counter('tokens_predicted_total', 'Number of generation tokens processed.', c.generatedTokensTotal),
    counter('tokens_predicted_seconds_total', 'Predict process time', c.predictedMsTotal / 1000),
    counter('n_decode_total', 'Total number of llama_decode() calls', c.decodeTotal),
    counter('n_tokens_max', 'Largest observed n_tokens.', c.peakKvTokens),
    gauge('prompt_tokens_seconds', 'Average prompt throughput in tokens/s.', perSecond(c.promptTokensTotal, c.promptMsTotal)),
    gauge(
      'predicted_tokens_seconds',
      'Average generation throughput in tokens/s.',
      perSecond(c.generatedTokensTotal, c.predictedMsTotal),
    ),
    gauge('requests_processing', 'Number of requests processing.', engine.processingCount()),
    gauge('requests_deferred', 'Number of requests deferred.', engine.waitingCount()),
    gauge('n_busy_slots_per_decode', 'Average number of busy slots per llama_decode() call', engine.processingCount()),
  ]);
  return textReply(200, text, {
    ...BASE_HEADERS,
    'Content-Type': 'text/plain; version=0.0.4',
    'Process-Start-Time-Unix': String(processStartSec),
  });
}
