// I/O: one `GET {node.url}/v1/models`, bounded in time and bytes, turned into a DiscoveryResult.
// Never throws: every failure (refused, timed out, non-2xx, oversized, not JSON, wrong shape)
// becomes a failed result whose message names the cause. The API key is sent, never reported.
// A listing is bounded by `rules` before anyone sees it (limit-listing.ts).

import { boundedExchange, type ExchangeDispatcher } from '#src/core/bounded-exchange.ts';
import type { NodeSpec } from '#src/config/types.ts';
import { systemClock, type Clock } from '#src/core/clock.ts';
import type { DiscoveryResult } from './discovery-state.ts';
import { limitListing, type ListingRules } from './limit-listing.ts';
import { parseModelList } from './parse-model-list.ts';
import type { ListingCache } from './listing-cache.ts';

export interface FetchModelListOptions {
  readonly dispatcher: ExchangeDispatcher;
  /** Bound on the whole fetch: connect, headers and body. */
  readonly timeoutMs: number;
  /** Bound on the response body; a larger body is not read further. */
  readonly maxBodyBytes: number;
  /** Aborts the fetch (e.g. the node was removed); the result is then a failed one. */
  readonly signal?: AbortSignal;
  /** Schedules the timeout; defaults to the system clock. */
  readonly clock?: Clock;
  /** Bounds on the listing taken; absent = the whole listing. */
  readonly rules?: ListingRules;
  /** The previous answers: an unchanged body reuses its result (listing-cache.ts). */
  readonly cache?: ListingCache;
}

/** How much of a non-2xx body is quoted in the error (servers explain e.g. "Loading model"). */
const ERROR_SNIPPET_CHARS = 200;

type BodyOutcome = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly error: string };

export async function fetchModelList(node: NodeSpec, options: FetchModelListOptions): Promise<DiscoveryResult> {
  const url = `${node.url.replace(/\/+$/, '')}/v1/models`;
  const controller = new AbortController();
  let timedOut = false;
  const timer = (options.clock ?? systemClock).setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const onOuterAbort = (): void => controller.abort(options.signal?.reason);
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    const target = new URL(url);
    const answer = await boundedExchange(
      options.dispatcher,
      {
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'GET',
        headers: headersFor(node),
        // undici's own timers are a backstop only; our timer bounds the whole exchange.
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      },
      {
        maxBytes: options.maxBodyBytes,
        maxErrorBytes: Math.min(options.maxBodyBytes, ERROR_SNIPPET_CHARS * 4),
        signal: controller.signal,
      },
    );
    if (answer.kind === 'failed') throw answer.error;
    const isSuccess = answer.status >= 200 && answer.status < 300;
    const body: BodyOutcome =
      answer.kind === 'answer'
        ? { ok: true, bytes: answer.bytes }
        : { ok: false, error: `response body exceeds the limit of ${answer.limit} bytes` };
    if (!isSuccess) {
      const snippet = body.ok ? snippetOf(body.bytes.toString('utf8')) : '';
      return failed('error', `GET ${url} answered HTTP ${answer.status}${snippet === '' ? '' : `: ${snippet}`}`);
    }
    if (!body.ok) return failed('parse_error', `GET ${url}: ${body.error}`);
    // Compared as bytes: an unchanged answer is never even decoded.
    const known = options.cache?.get(node, options.rules, body.bytes);
    if (known !== undefined) return known;
    let json: unknown;
    try {
      json = JSON.parse(body.bytes.toString('utf8'));
    } catch (error) {
      return failed('parse_error', `GET ${url}: response is not valid JSON (${messageOf(error)})`);
    }
    const parsed = parseModelList(node.kind, json);
    if (!parsed.ok) return failed('parse_error', `GET ${url}: ${parsed.error}`);
    const result: DiscoveryResult =
      options.rules === undefined
        ? { ok: true, models: parsed.models }
        : { ok: true, ...limitListing(parsed.models, options.rules) };
    options.cache?.set(node, options.rules, body.bytes, result);
    return result;
  } catch (error) {
    if (timedOut) return failed('timeout', `GET ${url} timed out after ${options.timeoutMs} ms`);
    if (options.signal?.aborted) return failed('error', `GET ${url} aborted`);
    return failed('error', `GET ${url} failed: ${messageOf(error)}`);
  } finally {
    timer.cancel();
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
}

function headersFor(node: NodeSpec): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (node.apiKey !== undefined && node.apiKey !== '') headers['authorization'] = `Bearer ${node.apiKey}`;
  return headers;
}

function snippetOf(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, ERROR_SNIPPET_CHARS);
}

function failed(reason: 'error' | 'parse_error' | 'timeout', error: string): DiscoveryResult {
  return { ok: false, reason, error };
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = 'code' in error ? error.code : undefined;
    return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
