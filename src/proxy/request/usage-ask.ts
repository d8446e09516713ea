// Pure: asking a node for a stream's usage (docs/tenants.md, "Usage accounting"). A client that
// streams from an endpoint whose streams state no usage unless asked, and did not ask itself, has
// `stream_options.include_usage: true` added to the body the node gets: in the bytes, as the model
// rewrite is (raw-json.ts), so every other byte stays the client's. What asking added is taken out
// of the answer again (usage-strip.ts). A client that asked gets the stream as the node sends it.

import { isRecord } from '#src/core/is-record.ts';
import { ASKED_WITH_NULLS, streamUsageFor, type StreamUsage } from '#src/kinds/index.ts';
import type { NodeView } from '#src/nodes/index.ts';
import type { UsageAsked } from '../attempt/usage-strip.ts';
import { scanBody, withoutTopLevelMembers, withTopLevelJson } from './raw-json.ts';
import type { ResolvedRequest } from './request-model.ts';

const STREAM_OPTIONS = 'stream_options';
const INCLUDE_USAGE = 'include_usage';
const CONTINUOUS_USAGE = 'continuous_usage_stats';

/** Whether the client streams without asking for the usage chunk itself. */
export function streamsWithoutUsage(resolved: Pick<ResolvedRequest, 'stream' | 'json'>): boolean {
  if (!resolved.stream) return false;
  const options = resolved.json[STREAM_OPTIONS];
  if (options === undefined || options === null) return true;
  // Anything but an object is the node's to refuse, as the client sent it. vLLM's
  // `continuous_usage_stats` puts usage on every chunk once usage is included: not asked either.
  return isRecord(options) && options[INCLUDE_USAGE] !== true && options[CONTINUOUS_USAGE] !== true;
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
  const changed =
    options[0] === 0x7b
      ? withTopLevelJson(options, scanBody(options, INCLUDE_USAGE), INCLUDE_USAGE, 'true')
      : Buffer.from(wanted);
  return Buffer.concat([raw.subarray(0, start), changed, raw.subarray(end)]);
}

const NULL = Buffer.from('null');
/** How OpenAI and vLLM write it: the chunk's last member, so surely a top-level one. */
const LAST_MEMBER = Buffer.from(',"usage":null}');

/** A chunk's JSON without its top-level `"usage":null` members: what asking a kind that adds them added. */
export function withoutNullUsage(data: Buffer): Buffer {
  const cut = data.length - LAST_MEMBER.length;
  if (cut > 0 && data.compare(LAST_MEMBER, 0, LAST_MEMBER.length, cut) === 0 && !data.subarray(0, cut).includes('"usage"')) {
    return Buffer.concat([data.subarray(0, cut), data.subarray(data.length - 1)]);
  }
  return withoutTopLevelMembers(data, scanBody(data, 'usage'), NULL);
}

/** What one target is sent instead of the client's body, and what the answer then has taken out. */
export interface AskedCall {
  readonly body: Buffer;
  readonly usageAsked: UsageAsked;
}

/** The asking of one request, its body built at most once however many of its targets are asked. */
export class UsageAsk {
  readonly #resolved: Pick<ResolvedRequest, 'stream' | 'json' | 'body'>;
  readonly #endpoint: string;
  #built = false;
  #body: Buffer | undefined;

  constructor(endpoint: string, resolved: Pick<ResolvedRequest, 'stream' | 'json' | 'body'>) {
    this.#endpoint = endpoint;
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

  /** For a node, by what its kind's streams say unasked (kinds/stream-usage.ts); undefined = sent as the client sent it. */
  forNode(node: Pick<NodeView, 'spec' | 'capacity' | 'facts'>): AskedCall | undefined {
    return this.#call(node.facts?.streamUsage ?? streamUsageFor(node.spec.kind, node.capacity.role));
  }

  /**
   * For a remote site, whose nodes are not known here: asked as an OpenAI server is, and
   * `"usage":null` taken out, as OpenAI's unasked streams have none.
   */
  forSite(): AskedCall | undefined {
    return this.#call(ASKED_WITH_NULLS);
  }

  #call(usage: StreamUsage): AskedCall | undefined {
    if (!usage.askOn.includes(this.#endpoint)) return undefined;
    const body = this.body();
    return body === undefined
      ? undefined
      : { body, usageAsked: { withoutAddedNulls: usage.nullsWhenAsked ? withoutNullUsage : undefined } };
  }
}
