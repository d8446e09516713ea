// Pure: what one `GET /v1/models` entry says beyond its id, in the vocabulary of the kinds that add
// fields to the OpenAI card: a llama.cpp router's `status` (`value`, and `args`: the model's command
// line, llamacpp-kv.ts), llama.cpp's `meta.n_ctx` and `aliases`, vLLM's and SGLang's `max_model_len`.
// The fields never collide, so every kind reads them all: a node configured as `openai` may be a
// proxy in front of any of these servers.

import { isRecord } from '#src/core/is-record.ts';
import { kvModeFromArgs, routerArgsOf } from './llamacpp-kv.ts';
import type { ListedEntry } from './server-kind.ts';

/** The router statuses the gateway knows (docs/protocols.md "Pushed model state"); any other value is kept and shown as unknown. */
const KNOWN_STATUSES: ReadonlySet<string> = new Set([
  'loaded',
  'loading',
  'unloaded',
  'sleeping',
  'downloading',
  'downloaded',
  'failed',
]);

export function readListingEntry(entry: Readonly<Record<string, unknown>>, id: string): ListedEntry {
  const status = routerStatus(entry['status']);
  const args = routerArgsOf(entry['status']);
  const kv = args === undefined ? undefined : kvModeFromArgs(args);
  const exitCode = status.failed ? status.exitCode : undefined;
  return {
    // No status object means a single-model server or a kind without one: always ready.
    loaded: status.present ? status.value === 'loaded' : true,
    // A router lists a child that exited non-zero as `unloaded` with `failed: true, exit_code`.
    status: status.failed ? 'failed' : status.value,
    contextTokens: contextTokensOf(entry),
    aliases: aliasesOf(entry['aliases'], id),
    ...(kv === undefined ? {} : { kv }),
    ...(exitCode === undefined ? {} : { exitCode }),
  };
}

/** Why a listed model must not be routed to although listed, or undefined: a failed child, a download. */
export interface EntryHold {
  readonly reason: 'failed' | 'downloading';
  readonly detail: string;
}

/** Pure: a listed entry that a request must not be sent to (its status says it cannot answer), with why. */
export function entryHold(entry: Pick<ListedEntry, 'status' | 'exitCode' | 'progress'>): EntryHold | undefined {
  switch (entry.status) {
    case 'failed':
      return {
        reason: 'failed',
        detail: `its instance on the router exited with code ${entry.exitCode ?? 'unknown'} (failed); routed again once it loads or the router lists it otherwise`,
      };
    case 'downloading':
      return { reason: 'downloading', detail: `downloading${progressText(entry.progress)}; not a model the router can load yet` };
    case 'downloaded':
      return {
        reason: 'downloading',
        detail: 'downloaded; routable once the router lists it as a model (its next models reload)',
      };
    default:
      return undefined;
  }
}

/** Whether a status value is one the gateway knows (an unknown one is kept, routed as on demand, and shown). */
export function isKnownStatus(status: string | undefined): boolean {
  return status === undefined || KNOWN_STATUSES.has(status);
}

/** ` (42%, 1.2 of 2.9 GB)`-style text for a progress, or '' when none is known. */
export function progressText(progress: ListedEntry['progress']): string {
  if (progress === undefined) return '';
  const parts: string[] = [];
  if (progress.fraction !== undefined) parts.push(`${Math.floor(progress.fraction * 100)}%`);
  if (progress.stage !== undefined) parts.push(progress.stage);
  if (progress.totalBytes !== undefined && progress.totalBytes > 0)
    parts.push(`${gigabytes(progress.doneBytes ?? 0)} of ${gigabytes(progress.totalBytes)} GB`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

function gigabytes(bytes: number): string {
  return (bytes / 1e9).toFixed(1);
}

/** Listed as running: loaded, or on a router `loading` or `sleeping` (a request reaches it without a switch). */
export function isRunningEntry(entry: Pick<ListedEntry, 'loaded' | 'status'>): boolean {
  return entry.loaded || entry.status === 'loading' || entry.status === 'sleeping';
}

/** Listed as coming up now (a router's `loading`): not a model the router would evict as idle. */
export function isLoadingEntry(entry: Pick<ListedEntry, 'status'>): boolean {
  return entry.status === 'loading';
}

function routerStatus(raw: unknown): { present: boolean; value: string | undefined; failed: boolean; exitCode?: number } {
  if (raw === undefined || raw === null) return { present: false, value: undefined, failed: false };
  const value = isRecord(raw) ? raw['value'] : undefined;
  const exit = isRecord(raw) ? raw['exit_code'] : undefined;
  const exitCode = typeof exit === 'number' && Number.isInteger(exit) ? exit : undefined;
  // `failed: true` (or, from a build that lists only the code, a non-zero exit code) on an unloaded model.
  const failed = value === 'unloaded' && isRecord(raw) && (raw['failed'] === true || (exitCode !== undefined && exitCode !== 0));
  return {
    present: true,
    value: typeof value === 'string' ? value : undefined,
    failed,
    ...(exitCode === undefined ? {} : { exitCode }),
  };
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
