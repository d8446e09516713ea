// An Ollama server (PROTOCOLS.md §3): `GET /` "Ollama is running", /api/version, /api/tags,
// /api/ps (loaded models only), /api/show, and the OpenAI routes. Inference loads a model on demand
// (taking `load_time`), evicting the least recently used one at `models_max`. No API keys.

import { createHash } from 'node:crypto';
import type { EndpointClass, KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody } from '#src/sim/inference.ts';
import type { InferenceEndpoint } from '#src/sim/inference-dialect.ts';
import { OPENAI_INFERENCE_PATHS } from '#src/sim/openai-surface.ts';
import { textReply, type Reply } from '#src/sim/reply.ts';
import { ResidentModels, type ResidentView } from '#src/sim/resident-models.ts';
import { canonicalModelId, type ResolvedModel } from '#src/sim/spec.ts';
import { ollamaLoadOrUnload } from '#src/sim/kinds/ollama-keep-alive.ts';
import { ollamaDialect, ollamaJson, ollamaModelNotFound, ollamaOpenAiError } from '#src/sim/kinds/ollama-dialect.ts';
import { handleNative, NATIVE_PATHS, ollamaError, type NativeEndpoint } from '#src/sim/kinds/ollama-native.ts';

/** A release with every route the simulator answers (the Anthropic layer came with 0.14.0). */
export const OLLAMA_VERSION = '0.14.0';
const KEEP_ALIVE_MS = 5 * 60_000;

function classify(method: string, path: string): EndpointClass {
  if (method === 'POST' && (OPENAI_INFERENCE_PATHS[path] !== undefined || NATIVE_PATHS[path] !== undefined)) return 'inference';
  if (method === 'GET' && path === '/v1/models') return 'models';
  if (path === '/' || path === '/api/version') return 'health';
  return 'other';
}

const PLAIN: Readonly<Record<string, string>> = { 'Content-Type': 'text/plain; charset=utf-8' };

function digestOf(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

function details(model: ResolvedModel): Record<string, unknown> {
  const billions = (model.sizeBytes * 8) / 4.85 / 1e9;
  return {
    parent_model: '',
    format: 'gguf',
    family: 'llama',
    families: ['llama'],
    parameter_size: `${billions.toFixed(1)}B`,
    quantization_level: 'Q4_K_M',
  };
}

/** `library` for official names, else the namespace before the slash. */
function ownerOf(id: string): string {
  const slash = id.indexOf('/');
  return slash === -1 ? 'library' : id.slice(0, slash);
}

export function ollamaHandler(context: KindContext): KindHandler {
  const { node, clock } = context;
  const residents = new ResidentModels(node, clock, context.residencyChanged);
  const dialect = ollamaDialect(context.random);
  const modifiedAt = new Date(context.startedAtSec * 1000).toISOString();
  const resolve = (name: string): ResolvedModel | undefined => residents.resolve(canonicalModelId('ollama', name));
  const card = (model: ResolvedModel): Record<string, unknown> => ({
    id: model.id,
    object: 'model',
    created: context.startedAtSec,
    owned_by: ownerOf(model.id),
  });

  const tags = (): unknown => ({
    models: node.models.map((model) => ({
      name: model.id,
      model: model.id,
      modified_at: modifiedAt,
      size: model.sizeBytes,
      digest: digestOf(model.id),
      details: details(model),
      capabilities: ['completion'],
    })),
  });

  const ps = (): unknown => {
    const loaded = residents.views().filter((v) => v.status === 'loaded');
    const expiresAt = (view: ResidentView): number => view.lastUsedAtMs + KEEP_ALIVE_MS;
    loaded.sort((a, b) => expiresAt(b) - expiresAt(a));
    return {
      models: loaded.map((view) => ({
        name: view.model.id,
        model: view.model.id,
        size: view.model.sizeBytes,
        digest: digestOf(view.model.id),
        details: details(view.model),
        expires_at: new Date(expiresAt(view)).toISOString(),
        size_vram: view.model.sizeBytes,
        context_length: view.model.contextTokens,
      })),
    };
  };

  function show(exchange: SimExchange): Reply {
    const body = exchange.body.kind === 'json' ? exchange.body.value : undefined;
    const record = typeof body === 'object' && body !== null ? Object.fromEntries(Object.entries(body)) : {};
    const name = record['model'] ?? record['name'];
    const model = typeof name === 'string' ? resolve(name) : undefined;
    if (model === undefined) return ollamaError(404, `model '${String(name ?? '')}' not found`);
    return ollamaJson(200, {
      license: '',
      modelfile: `FROM ${model.id}\n`,
      parameters: '',
      template: '{{ .Prompt }}',
      details: details(model),
      model_info: {
        'general.architecture': 'llama',
        'general.parameter_count': Math.round((model.sizeBytes * 8) / 4.85),
        'llama.context_length': model.contextTokens,
        'llama.embedding_length': 64,
      },
      capabilities: ['completion'],
      modified_at: modifiedAt,
    });
  }

  /** The native API's body, or undefined after its `{"error"}` answer. */
  function nativeBody(exchange: SimExchange): Record<string, unknown> | undefined {
    const { body } = exchange;
    if (body.kind === 'json' && typeof body.value === 'object' && body.value !== null && !Array.isArray(body.value))
      return Object.fromEntries(Object.entries(body.value));
    exchange.writer.reply(ollamaError(400, body.kind === 'empty' ? 'EOF' : 'invalid character looking for beginning of value'));
    return undefined;
  }

  async function inference(exchange: SimExchange, endpoint: InferenceEndpoint | NativeEndpoint, native: boolean): Promise<void> {
    const body = native ? nativeBody(exchange) : jsonObjectBody(exchange, dialect);
    if (body === undefined) return;
    const name = body['model'];
    if (native && (typeof name !== 'string' || name === '')) return exchange.writer.reply(ollamaError(400, 'model is required'));
    const model = typeof name === 'string' ? resolve(name) : undefined;
    if (model === undefined) {
      const said = typeof name === 'string' ? name : '';
      const notFound = ollamaModelNotFound(said);
      exchange.writer.reply(
        native
          ? ollamaError(404, `model '${said}' not found`)
          : endpoint === 'messages' || endpoint === 'count_tokens'
            ? (dialect.anthropic?.error(notFound) ?? notFound)
            : notFound,
      );
      return;
    }
    if (residents.status(model.id) === 'unloaded') residents.load(model.id);
    const status = await residents.settled(model.id, exchange.signal);
    const engine = residents.engine(model.id);
    if (exchange.signal.aborted) return;
    if (status !== 'loaded' || engine === undefined) {
      exchange.writer.reply(ollamaOpenAiError(500, `model "${model.id}" was unloaded while loading`));
      return;
    }
    residents.touch(model.id);
    if (native)
      await handleNative(
        exchange,
        NATIVE_PATHS[exchange.path] ?? 'chat',
        body,
        { reportedModel: model.id, engine, contextTokens: model.contextTokens },
        clock,
      );
    else
      await handleInference(
        exchange,
        OPENAI_INFERENCE_PATHS[exchange.path] ?? 'chat',
        body,
        { model, reportedModel: model.id, engine },
        dialect,
        clock,
      );
  }

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    const endpoint = method === 'POST' ? OPENAI_INFERENCE_PATHS[path] : undefined;
    if (endpoint !== undefined) {
      await inference(exchange, endpoint, false);
      return;
    }
    // A prompt-less generate loads or unloads the model (keep_alive), as Ollama's does; with a prompt it generates.
    if (method === 'POST' && path === '/api/generate') {
      const answered = await ollamaLoadOrUnload(exchange, residents, resolve);
      if (answered !== undefined) {
        writer.reply(answered);
        return;
      }
    }
    const native = method === 'POST' ? NATIVE_PATHS[path] : undefined;
    if (native !== undefined) {
      await inference(exchange, native, true);
      return;
    }
    if (method === 'GET' && path.startsWith('/v1/models/')) {
      const name = decodeURIComponent(path.slice('/v1/models/'.length));
      const model = resolve(name);
      writer.reply(model === undefined ? ollamaModelNotFound(name) : ollamaJson(200, card(model)));
      return;
    }
    const reply = ((): Reply | undefined => {
      switch (`${method} ${path}`) {
        case 'GET /':
        case 'HEAD /':
          return textReply(200, 'Ollama is running', PLAIN);
        case 'GET /api/version':
          return ollamaJson(200, { version: node.version ?? OLLAMA_VERSION });
        case 'GET /api/tags':
          return ollamaJson(200, tags());
        case 'GET /api/ps':
          return ollamaJson(200, ps());
        case 'POST /api/show':
          return show(exchange);
        case 'GET /v1/models':
          return ollamaJson(200, { object: 'list', data: node.models.map(card) });
        default:
          return undefined;
      }
    })();
    writer.reply(reply ?? textReply(404, '404 page not found', PLAIN));
  }

  return {
    classify,
    faultReplies: {
      internalError: () => ollamaOpenAiError(500, 'simulated internal error'),
      healthFailure: () => textReply(503, 'Ollama is not available', PLAIN),
      emptyModels: () => ollamaJson(200, { object: 'list', data: null }),
    },
    handle,
    modelIds: () => node.models.map((m) => m.id),
    close: () => residents.close(),
  };
}
