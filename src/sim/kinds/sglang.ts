// An SGLang server (PROTOCOLS.md §4): one served model whose name requests need not match,
// empty-body /health and /health_generate, /get_model_info, /get_server_info, /v1/tokenize and
// /tokenize, `sglang:` metrics when enabled, FastAPI's {"detail": ...} for unknown routes.

import type { EndpointClass, KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody, type InferenceTarget } from '#src/sim/inference.ts';
import type { InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import { createModelEngine } from '#src/sim/model-engine.ts';
import { renderPrometheus } from '#src/sim/prometheus-text.ts';
import { jsonReply, textReply, type Reply } from '#src/sim/reply.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import { textPromptTokens, tokenIds } from '#src/sim/tokenizer.ts';
import { SGLANG_JSON_HEADERS, sglangDialect, sglangJson } from '#src/sim/kinds/sglang-dialect.ts';

export const SGLANG_VERSION = '0.5.3';

const INFERENCE_PATHS: Readonly<Record<string, InferenceEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embeddings',
  '/v1/responses': 'responses',
};

const HEALTH_PATHS: ReadonlySet<string> = new Set(['/health', '/health_generate']);
/** Paths SGLang's API-key middleware lets through. */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/health', '/health_generate', '/ping', '/metrics']);

function classify(method: string, path: string): EndpointClass {
  if (method === 'POST' && INFERENCE_PATHS[path] !== undefined) return 'inference';
  if (method === 'GET' && path === '/v1/models') return 'models';
  if (HEALTH_PATHS.has(path)) return 'health';
  return 'other';
}

const emptyBody = (status: number): Reply => textReply(status, '', { server: 'uvicorn' });

function serverInfo(model: ResolvedModel, port: number, ttftMs: number): Record<string, unknown> {
  return {
    model_path: model.id,
    tokenizer_path: model.id,
    served_model_name: model.id,
    host: '127.0.0.1',
    port,
    context_length: model.contextTokens,
    max_running_requests: model.slots,
    chunked_prefill_size: 8192,
    is_embedding: false,
    max_total_num_tokens: model.contextTokens * model.slots,
    internal_states: [{ last_gen_throughput: ttftMs > 0 ? 1000 / ttftMs : 0 }],
    version: SGLANG_VERSION,
  };
}

export function sglangHandler(context: KindContext, model: ResolvedModel, port: () => number): KindHandler {
  const { node, clock } = context;
  const dialect = sglangDialect(context.random);
  const target: InferenceTarget = { model, reportedModel: model.id, engine: createModelEngine(node, model, clock) };
  const card = (): Record<string, unknown> => ({
    id: model.id,
    object: 'model',
    created: Math.floor(clock.now() / 1000),
    owned_by: 'sglang',
    root: model.id,
    max_model_len: model.contextTokens,
  });

  function metrics(): Reply {
    const { engine } = target;
    const labels = { model_name: model.id };
    const one = (name: string, help: string, type: 'counter' | 'gauge', value: number) => ({
      name,
      help,
      type,
      samples: [{ labels, value }],
    });
    const c = engine.counters();
    const text = renderPrometheus([
      one('sglang:num_running_reqs', 'The number of running requests.', 'gauge', engine.processingCount()),
      one('sglang:num_queue_reqs', 'The number of requests in the waiting queue.', 'gauge', engine.waitingCount()),
      one('sglang:num_used_tokens', 'The number of used tokens.', 'gauge', engine.kvTokensInUse()),
      one('sglang:token_usage', 'The token usage.', 'gauge', engine.kvUsageRatio()),
      one('sglang:gen_throughput', 'The generation throughput (token/s).', 'gauge', node.tokensPerSecond),
      one('sglang:cache_hit_rate', 'The prefix cache hit rate.', 'gauge', 0),
      one('sglang:prompt_tokens_total', 'Number of prefill tokens processed.', 'counter', c.promptTokensTotal),
      one('sglang:generation_tokens_total', 'Number of generation tokens processed.', 'counter', c.generatedTokensTotal),
    ]);
    return textReply(200, text, { server: 'uvicorn', 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
  }

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    if (node.apiKey !== undefined && !OPEN_PATHS.has(path) && exchange.headers['authorization'] !== `Bearer ${node.apiKey}`) {
      writer.reply(jsonReply(401, { error: 'Unauthorized' }, SGLANG_JSON_HEADERS));
      return;
    }
    const endpoint = method === 'POST' ? INFERENCE_PATHS[path] : undefined;
    if (endpoint !== undefined) {
      const body = jsonObjectBody(exchange, dialect);
      if (body !== undefined) await handleInference(exchange, endpoint, body, target, dialect, clock);
      return;
    }
    if (method === 'GET' && path.startsWith('/v1/models/')) {
      const name = decodeURIComponent(path.slice('/v1/models/'.length));
      writer.reply(
        name === model.id
          ? sglangJson(200, card())
          : sglangJson(404, {
              error: {
                message: `The model '${name}' does not exist`,
                type: 'invalid_request_error',
                param: 'model',
                code: 'model_not_found',
              },
            }),
      );
      return;
    }
    switch (`${method} ${path}`) {
      case 'GET /health':
      case 'GET /health_generate':
      case 'GET /ping':
        writer.reply(emptyBody(200));
        return;
      case 'GET /v1/models':
        writer.reply(sglangJson(200, { object: 'list', data: [card()] }));
        return;
      case 'GET /get_model_info':
        writer.reply(
          sglangJson(200, {
            model_path: model.id,
            tokenizer_path: model.id,
            is_generation: true,
            preferred_sampling_params: null,
            weight_version: 'default',
          }),
        );
        return;
      case 'GET /get_server_info':
        writer.reply(sglangJson(200, serverInfo(model, port(), node.ttftMs)));
        return;
      case 'POST /tokenize':
      case 'POST /v1/tokenize': {
        const body = jsonObjectBody(exchange, dialect);
        if (body === undefined) return;
        const prompt = body['prompt'];
        const tokens = typeof prompt === 'string' ? tokenIds(prompt) : Array.from({ length: textPromptTokens(prompt) }, () => 2);
        writer.reply(sglangJson(200, { tokens, count: tokens.length, max_model_len: model.contextTokens }));
        return;
      }
      case 'GET /metrics':
        if (node.metrics) {
          writer.reply(metrics());
          return;
        }
        break;
    }
    writer.reply(sglangJson(404, { detail: 'Not Found' }));
  }

  return {
    classify,
    faultReplies: {
      internalError: () =>
        sglangJson(500, {
          object: 'error',
          message: 'simulated internal error',
          type: 'InternalServerError',
          param: null,
          code: 500,
        }),
      healthFailure: () => emptyBody(503),
      emptyModels: () => sglangJson(200, { object: 'list', data: [] }),
    },
    handle,
    modelIds: () => [model.id],
    close: () => target.engine.close(),
  };
}
