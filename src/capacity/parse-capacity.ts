// Pure parsers for the endpoints that tell a node's context and slots. Tolerant of extra or
// missing keys (older llama.cpp builds differ); anything unreadable yields undefined, never a throw.

import type { ModelContext, ServerRole } from './node-capacity.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

export interface PropsReading {
  readonly role: ServerRole;
  /** Undefined for a router, whose n_ctx is 0 and means nothing. */
  readonly context: ModelContext | undefined;
}

/** llama.cpp GET /props (plain or ?model=): router or single, and `n_ctx` per slot + total_slots. */
export function parseLlamaProps(body: unknown): PropsReading | undefined {
  if (!isRecord(body)) return undefined;
  if (body.role === 'router') return { role: 'router', context: undefined };
  const settings = body.default_generation_settings;
  const nCtx = isRecord(settings) ? positiveInt(settings.n_ctx) : undefined;
  if (nCtx === undefined) return undefined;
  return { role: 'single', context: { nCtx, slots: positiveInt(body.total_slots) } };
}

/** Ollama GET /api/ps: the loaded models and their runtime context_length. */
export function parseOllamaPs(body: unknown): { loadedIds: string[]; models: Record<string, ModelContext> } | undefined {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined;
  const loadedIds: string[] = [];
  const models: Record<string, ModelContext> = {};
  for (const entry of body.models) {
    if (!isRecord(entry)) continue;
    const id = typeof entry.model === 'string' && entry.model ? entry.model : typeof entry.name === 'string' ? entry.name : '';
    if (!id) continue;
    loadedIds.push(id);
    const nCtx = positiveInt(entry.context_length);
    if (nCtx !== undefined) models[id] = { nCtx, slots: undefined };
  }
  return { loadedIds, models };
}
