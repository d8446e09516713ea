// A generic OpenAI-compatible server (an LM Studio or TGI box, a LiteLLM-style proxy, vLLM before
// its Anthropic router): only /v1/models (and /v1/models/{id}), /v1/chat/completions,
// /v1/completions and /v1/embeddings, plus /health. Anything else — /v1/responses and /v1/messages
// included — is a route-level 404 {"detail":"Not Found"}, as such a server answers. No metrics, no
// tokenizer, no context length in its listing: the gateway learns only what the standard says.

import type { EndpointClass, KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody, type InferenceTarget } from '#src/sim/inference.ts';
import type { InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import { createModelEngine } from '#src/sim/model-engine.ts';
import { jsonReply } from '#src/sim/reply.ts';
import { OPENAI_JSON_HEADERS, openaiDialect, openaiError, openaiJson } from '#src/sim/kinds/openai-dialect.ts';

const INFERENCE_PATHS: Readonly<Record<string, InferenceEndpoint>> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/v1/embeddings': 'embeddings',
};

const MODEL_PATH = /^\/v1\/models\/(.+)$/;

function classify(method: string, path: string): EndpointClass {
  if (method === 'POST' && INFERENCE_PATHS[path] !== undefined) return 'inference';
  if (method === 'GET' && path === '/v1/models') return 'models';
  if (path === '/health') return 'health';
  return 'other';
}

const notFound = () => openaiJson(404, { detail: 'Not Found' });

export function openaiHandler(context: KindContext): KindHandler {
  const { node, clock, random } = context;
  const dialect = openaiDialect(random);
  const targets: InferenceTarget[] = node.models.map((model) => ({
    model,
    reportedModel: model.id,
    engine: createModelEngine(node, model, clock),
  }));
  const names = (target: InferenceTarget): readonly string[] => [target.model.id, ...target.model.aliases];
  const card = (name: string): Record<string, unknown> => ({
    id: name,
    object: 'model',
    created: Math.floor(context.startedAtSec),
    owned_by: 'organization-owner',
  });
  const modelMissing = (name: string) =>
    openaiError(
      404,
      `The model \`${name}\` does not exist or you do not have access to it.`,
      'invalid_request_error',
      null,
      'model_not_found',
    );

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    if (node.apiKey !== undefined && exchange.headers['authorization'] !== `Bearer ${node.apiKey}`) {
      writer.reply(openaiError(401, 'Incorrect API key provided.', 'invalid_request_error', null, 'invalid_api_key'));
      return;
    }
    const endpoint = method === 'POST' ? INFERENCE_PATHS[path] : undefined;
    if (endpoint !== undefined) {
      const body = jsonObjectBody(exchange, dialect);
      if (body === undefined) return;
      const name = body['model'];
      if (typeof name !== 'string') {
        writer.reply(dialect.missingField('model'));
        return;
      }
      const target = targets.find((t) => names(t).includes(name));
      if (target === undefined) {
        writer.reply(modelMissing(name));
        return;
      }
      await handleInference(exchange, endpoint, body, target, dialect, clock);
      return;
    }
    if (method === 'GET' && path === '/v1/models') {
      writer.reply(openaiJson(200, { object: 'list', data: targets.flatMap(names).map(card) }));
      return;
    }
    const asked = method === 'GET' ? MODEL_PATH.exec(path)?.[1] : undefined;
    if (asked !== undefined) {
      const name = decodeURIComponent(asked);
      writer.reply(targets.some((t) => names(t).includes(name)) ? openaiJson(200, card(name)) : modelMissing(name));
      return;
    }
    if (method === 'GET' && path === '/health') {
      writer.reply(openaiJson(200, { status: 'ok' }));
      return;
    }
    writer.reply(notFound());
  }

  return {
    classify,
    faultReplies: {
      internalError: () => openaiError(500, 'simulated internal error', 'server_error', null, null),
      healthFailure: () => jsonReply(503, { status: 'unavailable' }, OPENAI_JSON_HEADERS),
      emptyModels: () => openaiJson(200, { object: 'list', data: [] }),
    },
    handle,
    modelIds: () => targets.flatMap(names),
    close: () => {
      for (const target of targets) target.engine.close();
    },
  };
}
