// Pure: asking a node for a stream's usage (docs/tenants.md, "Usage accounting"). A client that
// streams from an endpoint whose streams state no usage unless asked, and did not ask itself, has
// `stream_options.include_usage: true` added to the body the node gets: in the bytes, as the model
// rewrite is (raw-json.ts), so every other byte stays the client's. What asking added is taken out
// of the answer again (usage-strip.ts). A client that asked gets the stream as the node sends it.

import { isRecord } from '#src/core/is-record.ts';
import { scanBody, withTopLevelJson } from './raw-json.ts';
import type { ResolvedRequest } from './request-model.ts';

const STREAM_OPTIONS = 'stream_options';
const INCLUDE_USAGE = 'include_usage';

/** Whether the client streams without asking for the usage chunk itself. */
export function streamsWithoutUsage(resolved: Pick<ResolvedRequest, 'stream' | 'json'>): boolean {
  if (!resolved.stream) return false;
  const options = resolved.json[STREAM_OPTIONS];
  if (options === undefined || options === null) return true;
  // Anything but an object is the node's to refuse, as the client sent it.
  return isRecord(options) && options[INCLUDE_USAGE] !== true;
}

/**
 * The body with `stream_options.include_usage` set to true: the member added when the body has
 * no `stream_options` (or it is null); within the client's `stream_options` object, its
 * `include_usage` replaced (false, null) or added. Undefined when the client needs no asking
 * (it does not stream, or asked itself) or its `stream_options` is not an object.
 */
export function withUsageAsked(resolved: Pick<ResolvedRequest, 'stream' | 'json' | 'body'>): Buffer | undefined {
  if (!streamsWithoutUsage(resolved)) return undefined;
  const raw = resolved.body;
  const scan = scanBody(raw, STREAM_OPTIONS);
  const last = scan.valueSpans.at(-1);
  const wanted = `{"${INCLUDE_USAGE}":true}`;
  if (last === undefined) return withTopLevelJson(raw, scan, STREAM_OPTIONS, wanted);
  const [start, end] = last;
  const options = raw.subarray(start, end);
  // JSON.parse keeps the last of repeated keys (as the servers' parsers do): that one is changed.
  const changed = options[0] === 0x7b ? withTopLevelJson(options, scanBody(options, INCLUDE_USAGE), INCLUDE_USAGE, 'true') : Buffer.from(wanted);
  return Buffer.concat([raw.subarray(0, start), changed, raw.subarray(end)]);
}

/** The asking body of one request, built at most once however many of its targets are asked. */
export class UsageAsk {
  readonly #resolved: Pick<ResolvedRequest, 'stream' | 'json' | 'body'>;
  #built = false;
  #body: Buffer | undefined;

  constructor(resolved: Pick<ResolvedRequest, 'stream' | 'json' | 'body'>) {
    this.#resolved = resolved;
  }

  /** The body asking for usage; undefined = the client's own is sent (it needs no asking). */
  body(): Buffer | undefined {
    if (!this.#built) {
      this.#built = true;
      this.#body = withUsageAsked(this.#resolved);
    }
    return this.#body;
  }
}
