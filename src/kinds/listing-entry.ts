// Pure: what one `GET /v1/models` entry says beyond its id, in the vocabulary of the kinds that add
// fields to the OpenAI card: a llama.cpp router's `status` (`value`, and `args`: the model's command
// line, llamacpp-kv.ts), llama.cpp's `meta.n_ctx` and `aliases`, vLLM's and SGLang's `max_model_len`.
// The fields never collide, so every kind reads them all: a node configured as `openai` may be a
// proxy in front of any of these servers.

import { isRecord } from '#src/core/is-record.ts';
import { kvModeFromArgs, routerArgsOf } from './llamacpp-kv.ts';
import type { ListedEntry } from './server-kind.ts';

export function readListingEntry(entry: Readonly<Record<string, unknown>>, id: string): ListedEntry {
  const status = routerStatus(entry['status']);
  const args = routerArgsOf(entry['status']);
  const kv = args === undefined ? undefined : kvModeFromArgs(args);
  return {
    // No status object means a single-model server or a kind without one: always ready.
    loaded: status.present ? status.value === 'loaded' : true,
    status: status.value,
    contextTokens: contextTokensOf(entry),
    aliases: aliasesOf(entry['aliases'], id),
    ...(kv === undefined ? {} : { kv }),
  };
}

/** Listed as running: loaded, or on a router `loading` or `sleeping` (a request reaches it without a switch). */
export function isRunningEntry(entry: Pick<ListedEntry, 'loaded' | 'status'>): boolean {
  return entry.loaded || entry.status === 'loading' || entry.status === 'sleeping';
}

/** Listed as coming up now (a router's `loading`): not a model the router would evict as idle. */
export function isLoadingEntry(entry: Pick<ListedEntry, 'status'>): boolean {
  return entry.status === 'loading';
}

function routerStatus(raw: unknown): { present: boolean; value: string | undefined } {
  if (raw === undefined || raw === null) return { present: false, value: undefined };
  const value = isRecord(raw) ? raw['value'] : undefined;
  return { present: true, value: typeof value === 'string' ? value : undefined };
}

function contextTokensOf(entry: Readonly<Record<string, unknown>>): number | undefined {
  const maxModelLen = entry['max_model_len'];
  if (isPositiveNumber(maxModelLen)) return maxModelLen;
  const meta = entry['meta'];
  const nCtx = isRecord(meta) ? meta['n_ctx'] : undefined;
  return isPositiveNumber(nCtx) ? nCtx : undefined;
}

/** The aliases of every entry that has none (most): one frozen array, not one per model per listing. */
const NO_ALIASES: readonly string[] = Object.freeze([]);

function aliasesOf(raw: unknown, id: string): readonly string[] {
  if (!Array.isArray(raw) || raw.length === 0) return NO_ALIASES;
  const aliases = new Set<string>();
  for (const alias of raw) {
    if (typeof alias === 'string' && alias !== '' && alias !== id) aliases.add(alias);
  }
  return aliases.size === 0 ? NO_ALIASES : Object.freeze([...aliases]);
}

function isPositiveNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
