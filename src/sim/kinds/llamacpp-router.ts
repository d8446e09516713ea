// llama-server in router mode (§1.3, §1.4, §7): lists every known model with its status, loads
// children on demand (autoload) or by POST /models/load, and answers "proxied" endpoints as the
// model's child would. At `models_max` a request's load waits in the router's own queue (build 10313+,
// docs/protocols.md §7.z5: FIFO per model, waiters merged, an idle model evicted on arrival, a busy one
// never; a model's last request ending gives its slot to the queue), or on an older `version` is
// refused or evicts the LRU model (resident-models.ts). Every status change goes out on
// `GET /models/sse` (llamacpp-router-events.ts); `POST /models` downloads a model (llamacpp-router-downloads.ts).
// A POST with `X-Conversation-Id` is remembered → its model, and its answer kept by the child for
// the resumable-stream routes (llamacpp-streams.ts).

import type { KindContext, KindHandler, SimExchange } from '#src/sim/exchange.ts';
import { handleInference, jsonObjectBody } from '#src/sim/inference.ts';
import { RunningCompletions } from '#src/sim/running-completions.ts';
import type { ModelEngine } from '#src/sim/model-engine.ts';
import { ResidentModels, type ResidentView } from '#src/sim/resident-models.ts';
import type { ResolvedModel, ResolvedNode } from '#src/sim/spec.ts';
import { llamaDialect } from '#src/sim/kinds/llamacpp-dialect.ts';
import { llamaTranscription, transcriptionFields } from '#src/sim/kinds/llamacpp-audio.ts';
import {
  classifyLlamaPath,
  LLAMA_AUDIO_PATHS,
  LLAMA_RERANK_PATHS,
  llamaInferenceEndpoint,
  LLAMA_CONTROL_PATH,
  llamaFaultReplies,
  llamaSharedReply,
  llamaTokenizeAnswer,
} from '#src/sim/kinds/llamacpp-routes.ts';
import { rerankAnswer } from '#src/sim/pooling-audio.ts';
import { RouterEventHub } from '#src/sim/kinds/llamacpp-router-events.ts';
import { RouterDownloads } from '#src/sim/kinds/llamacpp-router-downloads.ts';
import { routerControl } from '#src/sim/kinds/llamacpp-router-control.ts';
import {
  ChildSessions,
  ConversationModels,
  conversationIdOf,
  GENERATING,
  inSession,
  isStreamRoute,
  routerStreamRoute,
  type RouterStreams,
} from '#src/sim/kinds/llamacpp-streams.ts';
import {
  llamaError,
  llamaInvalidRequest,
  llamaJson,
  LLAMA_BUILD_INFO,
  llamaLoading,
  llamaMetrics,
  llamaMetricsDisabled,
  llamaModelMeta,
  llamaNotFound,
  llamaProps,
  llamaRouterProps,
  llamaSlots,
} from '#src/sim/kinds/llamacpp-shapes.ts';

function childArgs(node: ResolvedNode, model: ResolvedModel, port: number): string[] {
  const contextSize = node.kv === 'unified' ? model.contextTokens : model.contextTokens * model.slots;
  return [
    '/usr/local/bin/llama-server',
    '--host',
    '127.0.0.1',
    ...(node.metrics ? ['--metrics'] : []),
    '--port',
    String(port),
    '--alias',
    model.id,
    '--ctx-size',
    String(contextSize),
    '--model',
    `models/${model.id}.gguf`,
    '--parallel',
    String(model.slots),
    ...(node.kv === 'unified' ? ['--kv-unified'] : []),
  ];
}

/** One `/v1/models` entry; running (not loading) models gain the child's `meta`. */
function routerModelEntry(node: ResolvedNode, view: ResidentView, createdSec: number): Record<string, unknown> {
  const { model } = view;
  const hasPreset = model.aliases.length > 0;
  const status: Record<string, unknown> = { value: view.status, args: childArgs(node, model, view.childPort) };
  if (view.status === 'unloaded' && view.failed) Object.assign(status, { failed: true, exit_code: 1 });
  if (hasPreset) status['preset'] = `[${model.id}]\nalias = ${model.aliases.join(',')}\n`;
  const entry: Record<string, unknown> = {
    id: model.id,
    aliases: [...model.aliases],
    tags: [],
    object: 'model',
    owned_by: 'llamacpp',
    created: createdSec,
    status,
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    source: hasPreset ? 'preset' : 'models_dir',
    can_remove: false,
  };
  if (view.status === 'loaded' || view.status === 'sleeping') entry['meta'] = llamaModelMeta(model);
  return entry;
}

/** A download's entry: not running, so no `meta`; from the cache, so removable. */
function downloadEntry(id: string, status: string, createdSec: number): Record<string, unknown> {
  return {
    id,
    aliases: [],
    tags: [],
    object: 'model',
    owned_by: 'llamacpp',
    created: createdSec,
    status: { value: status, args: [] },
    architecture: { input_modalities: ['text'], output_modalities: ['text'] },
    source: 'cache',
    can_remove: true,
  };
}

function autoloadOverride(value: string | undefined): boolean | undefined {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return undefined;
}

interface ReadyModel {
  readonly model: ResolvedModel;
  readonly engine: ModelEngine;
}

export function llamacppRouterHandler(context: KindContext): KindHandler {
  const { node, clock } = context;
  const residents = new ResidentModels(node, clock, context.residencyChanged);
  const hub = new RouterEventHub();
  const downloads = new RouterDownloads(node, clock, hub);
  const childSessions = new ChildSessions(clock);
  residents.follow((change) => {
    hub.changed(change, residents.resolve(change.id));
    // A child that exited took its stream sessions with it.
    if (change.kind === 'status' && change.status === 'unloaded') childSessions.drop(change.id);
  });
  const conversations = new ConversationModels();
  const routerStreams: RouterStreams = {
    conversations,
    child(name) {
      const model = residents.resolve(name);
      if (model === undefined) return { status: downloads.listed().find((d) => d.model.id === name)?.status };
      const status = residents.status(model.id);
      return status === 'loaded' ? { sessions: childSessions.of(model.id) } : { status };
    },
  };
  const childDialect = llamaDialect(context.random, true);
  const nowSec = (): number => Math.floor(clock.now() / 1000);
  const modelList = (views: readonly ResidentView[]): unknown => ({
    data: [
      ...views.map((view) => routerModelEntry(node, view, nowSec())),
      ...downloads.listed().map((d) => downloadEntry(d.model.id, d.status, nowSec())),
    ],
    object: 'list',
  });
  /** The router's `get_all_meta()`: finished downloads are read in as models first. */
  const currentViews = (): readonly ResidentView[] => {
    downloads.reread((model) => residents.add(model));
    return residents.views();
  };

  /** `router_validate_model` + `ensure_model_ready`: the ready model, or undefined once answered. */
  async function readyModel(exchange: SimExchange, name: string | undefined, isPost: boolean): Promise<ReadyModel | undefined> {
    const { writer } = exchange;
    if (name === undefined || name === '') {
      writer.reply(llamaInvalidRequest('model name is missing from the request'));
      return undefined;
    }
    const model = residents.resolve(name);
    if (model === undefined) {
      writer.reply(llamaInvalidRequest(`model '${name}' not found`));
      return undefined;
    }
    const autoload = autoloadOverride(exchange.query['autoload']) ?? node.autoload;
    residents.wake(model.id);
    const status = residents.status(model.id);
    if (!autoload && status === 'loading') {
      writer.replyChunked(llamaLoading());
      return undefined;
    }
    if (!autoload && status === 'unloaded') {
      writer.reply(llamaInvalidRequest('model is not loaded'));
      return undefined;
    }
    const load = status === 'unloaded' ? await residents.loadForRequest(model.id, exchange.signal) : 'go';
    if (exchange.signal.aborted) return undefined;
    if (load === 'limit_reached') {
      writer.reply(llamaError(500, 'server_error', 'model limit reached, try again later'));
      return undefined;
    }
    const settled = await residents.settled(model.id, exchange.signal);
    const engine = residents.engine(model.id);
    if (exchange.signal.aborted) return undefined;
    if (settled !== 'loaded' || engine === undefined) {
      writer.reply(llamaError(500, 'server_error', `model name=${model.id} failed to load`));
      return undefined;
    }
    // `ensure_model_ready` lets a model listed `loaded` through even while its child exits; the proxy
    // then cannot reach it (server_http_proxy: 500, a plain-text body). docs/protocols.md §7.z5.
    if (residents.stopping(model.id)) {
      writer.reply({
        status: 500,
        headers: { 'content-type': 'text/plain' },
        body: 'proxy error: Could not establish connection',
      });
      return undefined;
    }
    if (isPost) residents.touch(model.id);
    return { model, engine };
  }

  function startDownload(exchange: SimExchange): void {
    const body = jsonObjectBody(exchange, childDialect);
    if (body === undefined) return;
    const name = body['model'];
    if (typeof name !== 'string' || name === '') {
      exchange.writer.reply(llamaInvalidRequest('model must be a non-empty string'));
      return;
    }
    if (!downloads.start(name, residents.resolve(name) !== undefined)) {
      exchange.writer.reply(llamaInvalidRequest(`model '${name}' already exists`));
      return;
    }
    exchange.writer.reply(llamaJson(200, { success: true }));
  }

  function loadOrUnload(exchange: SimExchange, action: 'load' | 'unload'): void {
    const body = jsonObjectBody(exchange, childDialect);
    if (body === undefined) return;
    const name = body['model'];
    const model = typeof name === 'string' ? residents.resolve(name) : undefined;
    const { writer } = exchange;
    if (action === 'load') {
      if (model === undefined) writer.reply(llamaNotFound());
      else if (!residents.load(model.id)) writer.reply(llamaInvalidRequest('model is already running'));
      else writer.reply(llamaJson(200, { success: true }));
      return;
    }
    if (model === undefined) writer.reply(llamaInvalidRequest('model is not found'));
    else if (!residents.unloadAsked(model.id)) writer.reply(llamaInvalidRequest('model is not running'));
    else writer.reply(llamaJson(200, { success: true }));
  }

  async function handleProxiedGet(exchange: SimExchange): Promise<void> {
    const ready = await readyModel(exchange, exchange.query['model'], false);
    if (ready === undefined) return;
    const end = residents.beginRequest(ready.model.id);
    try {
      answerProxiedGet(exchange, ready);
    } finally {
      end();
    }
  }

  function answerProxiedGet(exchange: SimExchange, ready: ReadyModel): void {
    const { writer } = exchange;
    const isSleeping = residents.status(ready.model.id) === 'sleeping';
    if (exchange.path === '/props') writer.replyChunked(llamaJson(200, llamaProps(ready.model, node.metrics, isSleeping)));
    else if (exchange.path === '/slots') writer.replyChunked(llamaSlots(ready.engine, exchange.query));
    else writer.replyChunked(node.metrics ? llamaMetrics(ready.engine, context.startedAtSec) : llamaMetricsDisabled());
  }

  async function handleProxiedPost(exchange: SimExchange): Promise<void> {
    const form = LLAMA_AUDIO_PATHS.includes(exchange.path);
    const body = form ? (transcriptionFields(exchange) ?? {}) : jsonObjectBody(exchange, childDialect);
    if (body === undefined) return;
    const name = body['model'];
    // `conv_models.remember` before the load wait: a stop (DELETE) while it loads cancels this request,
    // and a client that leaves does not (a session request only stops on a stop).
    const conversationId = conversationIdOf(exchange.headers);
    const valid = typeof name === 'string' && residents.resolve(name) !== undefined;
    const tracked = valid ? conversations.remember(conversationId, name) : undefined;
    const waiting = tracked === undefined ? exchange : { ...exchange, signal: tracked.stopped };
    const ready = await readyModel(waiting, typeof name === 'string' ? name : undefined, true);
    if (tracked !== undefined && !conversations.alive(conversationId, tracked.ticket)) {
      exchange.writer.reply(llamaInvalidRequest('request cancelled by a stop while the model was loading'));
      return;
    }
    if (ready === undefined) return;
    // The router's req_count: a model mid-request is never the victim of another model's load.
    const end = residents.beginRequest(ready.model.id);
    try {
      await answerProxiedPost(exchange, body, ready);
    } finally {
      end();
    }
  }

  /** Each child's running completions (a control is proxied to the child of its `model`, as the router does). */
  const runningByModel = new Map<string, RunningCompletions>();
  const runningOf = (model: string): RunningCompletions => {
    let table = runningByModel.get(model);
    if (table === undefined) {
      table = new RunningCompletions();
      runningByModel.set(model, table);
    }
    return table;
  };

  async function answerProxiedPost(exchange: SimExchange, body: Record<string, unknown>, ready: ReadyModel): Promise<void> {
    const endpoint = llamaInferenceEndpoint(exchange.method, exchange.path);
    if (LLAMA_AUDIO_PATHS.includes(exchange.path)) {
      const answer = llamaTranscription(exchange);
      exchange.writer.replyChunked(
        answer.ok ? llamaJson(200, answer.json) : llamaError(400, 'invalid_request_error', answer.message),
      );
      return;
    }
    if (LLAMA_RERANK_PATHS.includes(exchange.path)) {
      const answer = rerankAnswer('llamacpp', body, { id: '', model: ready.model.id });
      exchange.writer.replyChunked(
        answer.ok ? llamaJson(200, answer.json) : llamaError(400, 'invalid_request_error', answer.message),
      );
      return;
    }
    const running = runningOf(ready.model.id);
    if (exchange.path === LLAMA_CONTROL_PATH) {
      const answer = running.control(body);
      exchange.writer.replyChunked(llamaJson(answer.status, answer.body));
      return;
    }
    if (endpoint === undefined) {
      exchange.writer.replyChunked(llamaJson(200, llamaTokenizeAnswer(body)));
      return;
    }
    const target = { model: ready.model, reportedModel: ready.model.id, engine: ready.engine, running };
    const conversationId = conversationIdOf(exchange.headers);
    if (conversationId !== '' && GENERATING.has(endpoint))
      await inSession(exchange, childSessions.of(ready.model.id), conversationId, (detached) =>
        handleInference(detached, endpoint, body, target, childDialect, clock),
      );
    else await handleInference(exchange, endpoint, body, target, childDialect, clock);
  }

  async function handle(exchange: SimExchange): Promise<void> {
    const { method, path, writer } = exchange;
    const shared = llamaSharedReply(exchange, node.apiKey);
    if (shared !== undefined) {
      writer.reply(shared);
      return;
    }
    if (
      llamaInferenceEndpoint(method, path) !== undefined ||
      (method === 'POST' &&
        (path === '/tokenize' ||
          path === LLAMA_CONTROL_PATH ||
          LLAMA_RERANK_PATHS.includes(path) ||
          LLAMA_AUDIO_PATHS.includes(path)))
    ) {
      await handleProxiedPost(exchange);
      return;
    }
    if (isStreamRoute(method, path)) {
      await routerStreamRoute(exchange, routerStreams);
      return;
    }
    switch (`${method} ${path}`) {
      case 'GET /models':
      case 'GET /v1/models':
        writer.reply(llamaJson(200, modelList(currentViews())));
        return;
      case 'GET /models/sse':
        await hub.serve(exchange);
        return;
      case 'POST /models':
        startDownload(exchange);
        return;
      case 'GET /props':
        if (exchange.query['model'] === undefined)
          writer.reply(
            llamaJson(200, { ...llamaRouterProps(node.modelsMax, node.autoload), build_info: node.version ?? LLAMA_BUILD_INFO }),
          );
        else await handleProxiedGet(exchange);
        return;
      case 'GET /slots':
      case 'GET /metrics':
        await handleProxiedGet(exchange);
        return;
      case 'POST /models/load':
        loadOrUnload(exchange, 'load');
        return;
      case 'POST /models/unload':
        loadOrUnload(exchange, 'unload');
        return;
      default:
        writer.reply(llamaNotFound());
    }
  }

  return {
    // The event stream is long-lived: recorded, never counted among the answers in flight.
    classify: (method, path) => (method === 'GET' && path === '/models/sse' ? 'events' : classifyLlamaPath(method, path)),
    faultReplies: llamaFaultReplies(() => llamaJson(200, modelList([]))),
    handle,
    modelIds: () => node.models.map((m) => m.id),
    close: () => {
      hub.dropAll();
      childSessions.dropAll();
      downloads.close();
      residents.close();
    },
    residency: () => residents.stats(),
    control: (action, body) => routerControl(action, body, residents, hub),
  };
}
