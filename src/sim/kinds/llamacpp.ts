// A single-model llama-server: one model, any requested model name accepted (§7: the request's
// `model` is ignored and answers carry the server's own name).

import type { KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody } from '#src/sim/inference.ts';
import { createModelEngine } from '#src/sim/model-engine.ts';
import type { ResolvedModel } from '#src/sim/spec.ts';
import { llamaDialect } from '#src/sim/kinds/llamacpp-dialect.ts';
import { llamaTranscription } from '#src/sim/kinds/llamacpp-audio.ts';
import {
  classifyLlamaPath,
  LLAMA_AUDIO_PATHS,
  LLAMA_CONTROL_PATH,
  LLAMA_RERANK_PATHS,
  llamaInferenceEndpoint,
  llamaFaultReplies,
  llamaSharedReply,
  llamaTokenizeAnswer,
} from '#src/sim/kinds/llamacpp-routes.ts';
import { rerankAnswer } from '#src/sim/pooling-audio.ts';
import { StreamSessions } from '#src/sim/stream-sessions.ts';
import { childStreamRoute, conversationIdOf, GENERATING, inSession, isStreamRoute } from '#src/sim/kinds/llamacpp-streams.ts';
import { RunningCompletions } from '#src/sim/running-completions.ts';
import {
  llamaError,
  llamaJson,
  LLAMA_BUILD_INFO,
  llamaMetrics,
  llamaMetricsDisabled,
  llamaNotFound,
  llamaProps,
  llamaSingleModelList,
  llamaSlots,
} from '#src/sim/kinds/llamacpp-shapes.ts';

export function llamacppHandler(context: KindContext, model: ResolvedModel): KindHandler {
  const { node, clock } = context;
  const engine = createModelEngine(node, model, clock);
  const dialect = llamaDialect(context.random, false);
  const nowSec = (): number => Math.floor(clock.now() / 1000);
  const running = new RunningCompletions();
  const sessions = new StreamSessions(clock);

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    const shared = llamaSharedReply(exchange, node.apiKey);
    if (shared !== undefined) {
      writer.reply(shared);
      return;
    }
    const endpoint = llamaInferenceEndpoint(method, path);
    if (endpoint !== undefined) {
      const body = jsonObjectBody(exchange, dialect);
      if (body === undefined) return;
      const target = { model, reportedModel: model.id, engine, running };
      const conversationId = conversationIdOf(exchange.headers);
      if (conversationId !== '' && GENERATING.has(endpoint))
        await inSession(exchange, sessions, conversationId, (detached) =>
          handleInference(detached, endpoint, body, target, dialect, clock),
        );
      else await handleInference(exchange, endpoint, body, target, dialect, clock);
      return;
    }
    if (isStreamRoute(method, path)) {
      await childStreamRoute(exchange, sessions);
      return;
    }
    if (method === 'POST' && path === LLAMA_CONTROL_PATH) {
      const body = jsonObjectBody(exchange, dialect);
      if (body === undefined) return;
      const answer = running.control(body);
      writer.reply(llamaJson(answer.status, answer.body));
      return;
    }
    if (method === 'POST' && LLAMA_AUDIO_PATHS.includes(path)) {
      const answer = llamaTranscription(exchange);
      writer.reply(answer.ok ? llamaJson(200, answer.json) : llamaError(400, 'invalid_request_error', answer.message));
      return;
    }
    if (method === 'POST' && LLAMA_RERANK_PATHS.includes(path)) {
      const body = jsonObjectBody(exchange, dialect);
      if (body === undefined) return;
      const answer = rerankAnswer('llamacpp', body, { id: '', model: model.id });
      writer.reply(answer.ok ? llamaJson(200, answer.json) : llamaError(400, 'invalid_request_error', answer.message));
      return;
    }
    switch (`${method} ${path}`) {
      case 'GET /models':
      case 'GET /v1/models':
        writer.reply(llamaJson(200, llamaSingleModelList(model, nowSec())));
        return;
      case 'GET /props':
        writer.reply(llamaJson(200, { ...llamaProps(model, node.metrics, false), build_info: node.version ?? LLAMA_BUILD_INFO }));
        return;
      case 'GET /slots':
        writer.reply(llamaSlots(engine, exchange.query));
        return;
      case 'GET /metrics':
        writer.reply(node.metrics ? llamaMetrics(engine, context.startedAtSec) : llamaMetricsDisabled());
        return;
      case 'POST /tokenize': {
        const body = jsonObjectBody(exchange, dialect);
        if (body !== undefined) writer.reply(llamaJson(200, llamaTokenizeAnswer(body)));
        return;
      }
      default:
        writer.reply(llamaNotFound());
    }
  }

  return {
    classify: classifyLlamaPath,
    faultReplies: llamaFaultReplies(() => llamaJson(200, llamaSingleModelList(undefined, nowSec()))),
    handle,
    modelIds: () => [model.id],
    close: () => {
      sessions.dropAll();
      engine.close();
    },
  };
}
