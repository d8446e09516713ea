// Loading and unloading a model through a kind's own API, as data: the POST that asks for it, how
// its answer reads, and the GET (and its pure reading) that confirms it took effect. A llama-server
// router loads and unloads asynchronously (its listing's `status` confirms, PROTOCOLS.md §1.3/§1.4);
// Ollama loads with a prompt-less `/api/generate` and unloads with `keep_alive: 0` (`/api/ps`
// confirms, §3.2/§3.3). Every other kind (and a single llama-server) declares that it cannot.

import { isRecord } from '#src/core/is-record.ts';
import type { ModelAction, ModelOpAnswer, ModelOpRequest, ModelOps, ObservedModelState } from './model-op-shapes.ts';

/** The error message of a llama.cpp (`{"error":{"message"}}`) or Ollama (`{"error":"…"}`) answer. */
function errorMessage(status: number, body: unknown): string {
  if (isRecord(body)) {
    const error = body.error;
    if (typeof error === 'string' && error) return `HTTP ${status}: ${error.slice(0, 200)}`;
    if (isRecord(error) && typeof error.message === 'string') return `HTTP ${status}: ${error.message.slice(0, 200)}`;
  }
  return `HTTP ${status}`;
}

function routerEntry(body: unknown, model: string): Readonly<Record<string, unknown>> | undefined | 'unreadable' {
  if (!isRecord(body) || !Array.isArray(body.data)) return 'unreadable';
  for (const entry of body.data) {
    if (!isRecord(entry)) continue;
    if (entry.id === model || (Array.isArray(entry.aliases) && entry.aliases.includes(model))) return entry;
  }
  return undefined;
}

export const LLAMACPP_ROUTER_OPS: ModelOps = Object.freeze({
  request: (action: ModelAction, model: string): ModelOpRequest => ({
    path: action === 'load' ? '/models/load' : '/models/unload',
    body: { model },
  }),
  answer(action: ModelAction, status: number, body: unknown): ModelOpAnswer {
    if (status >= 200 && status < 300) return { kind: 'accepted' };
    const message = errorMessage(status, body);
    if (action === 'load' && status === 400 && /already running/i.test(message)) return { kind: 'already' };
    if (action === 'unload' && status === 400 && /not running/i.test(message)) return { kind: 'already' };
    return { kind: 'refused', reason: message };
  },
  confirmPath: '/models',
  observe(body: unknown, model: string): ObservedModelState | undefined {
    const entry = routerEntry(body, model);
    if (entry === 'unreadable') return undefined;
    if (entry === undefined) return 'unloaded';
    const status = isRecord(entry.status) ? entry.status : undefined;
    const value = status?.value;
    if (value === 'loaded' || value === 'sleeping') return 'loaded';
    if (value === 'loading') return 'loading';
    return status?.failed === true ? 'failed' : 'unloaded';
  },
});

export const OLLAMA_OPS: ModelOps = Object.freeze({
  // A negative keep_alive keeps the model loaded until it is unloaded (keep_alive 0).
  request: (action: ModelAction, model: string): ModelOpRequest => ({
    path: '/api/generate',
    body: { model, keep_alive: action === 'load' ? -1 : 0 },
  }),
  answer(_action: ModelAction, status: number, body: unknown): ModelOpAnswer {
    return status >= 200 && status < 300 ? { kind: 'accepted' } : { kind: 'refused', reason: errorMessage(status, body) };
  },
  confirmPath: '/api/ps',
  observe(body: unknown, model: string): ObservedModelState | undefined {
    if (!isRecord(body) || !Array.isArray(body.models)) return undefined;
    const loaded = body.models.some((m) => isRecord(m) && (m.model === model || m.name === model));
    return loaded ? 'loaded' : 'unloaded';
  },
});

export const ollamaModelOps = (): ModelOps => OLLAMA_OPS;

/** The kinds that cannot load or unload a model on request. */
export const NO_MODEL_OPS = (): undefined => undefined;
