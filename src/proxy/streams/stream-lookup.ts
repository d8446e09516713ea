// `POST /v1/streams/lookup {"conversation_ids": [...]}` through the gateway, split by owner: each id
// the caller's tenant owns is asked of its node, the ids of one node together (as a router asks
// each child only for its own ids), and the entries are put together in the order of the nodes'
// first ids. An id the tenant does not own (unknown, forgotten, another tenant's) is left out, as a
// node leaves out an id it does not hold: the answer never shows whether another tenant uses it.
// Only entries for the very ids asked pass (a single server also answers `<id>::<model>` sessions,
// which could be another tenant's). A node that does not answer usably has its ids left out, and
// says so in `x-switchyard-unanswered` (node: reason). Bounded: the body, the ids, each node's
// exchange in time and bytes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { badRequest, GatewayError } from '#src/core/errors.ts';
import { isRecord } from '#src/core/is-record.ts';
import { sendError } from '../http/openai-error.ts';
import { readBody } from '../http/read-body.ts';
import type { Caller, FeatureRouteDeps } from '../feature/request-feature.ts';
import { ownerOf, STREAMS_LOOKUP_PATH, upstreamHeaders } from './owner-node.ts';

export const LOOKUP_BODY_MAX_BYTES = 64 * 1024;
export const LOOKUP_MAX_IDS = 256;
export const LOOKUP_TIMEOUT_MS = 5_000;
export const LOOKUP_ANSWER_MAX_BYTES = 1024 * 1024;

/** Pure: the ids a lookup body asks about (non-empty strings, each once), or the 400 naming what is wrong. */
export function lookupIds(body: Buffer): readonly string[] | GatewayError {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return badRequest('the body is not JSON: send {"conversation_ids": ["…"]}');
  }
  const ids = isRecord(json) ? json['conversation_ids'] : undefined;
  if (!Array.isArray(ids)) return badRequest('conversation_ids must be an array of conversation ids', 'conversation_ids');
  const asked = [...new Set(ids.filter((id): id is string => typeof id === 'string' && id !== ''))];
  if (asked.length > LOOKUP_MAX_IDS)
    return badRequest(
      `conversation_ids holds ${asked.length} ids; at most ${LOOKUP_MAX_IDS} are looked up at once`,
      'conversation_ids',
    );
  return asked;
}

/** Pure: the ids by owning node, in the order of each node's first id; ids with no owner are left out. */
export function byOwner(ids: readonly string[], owners: readonly (string | undefined)[]): ReadonlyMap<string, readonly string[]> {
  const grouped = new Map<string, string[]>();
  ids.forEach((id, i) => {
    const owner = owners[i];
    if (owner === undefined) return;
    const list = grouped.get(owner);
    if (list === undefined) grouped.set(owner, [id]);
    else list.push(id);
  });
  return grouped;
}

/** Pure: a node's lookup answer, kept to the entries for `asked`; a string says why it is unusable. */
export function ownedEntries(text: string, asked: ReadonlySet<string>): readonly unknown[] | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'its answer is not JSON';
  }
  if (!Array.isArray(json)) return 'its answer is not an array';
  return json.filter(
    (entry) => isRecord(entry) && typeof entry['conversation_id'] === 'string' && asked.has(entry['conversation_id']),
  );
}

export async function lookupStreams(
  deps: FeatureRouteDeps,
  req: IncomingMessage,
  res: ServerResponse,
  caller: Caller | undefined,
): Promise<void> {
  const ids = lookupIds(await readBody(req, LOOKUP_BODY_MAX_BYTES));
  if (ids instanceof GatewayError) return sendError(res, ids);
  const nodes = await Promise.all(ids.map((id) => ownerOf(deps, caller, id)));
  const specs = new Map(nodes.flatMap((node) => (node === undefined ? [] : [[node.spec.name, node] as const])));
  const groups = byOwner(
    ids,
    nodes.map((node) => node?.spec.name),
  );
  const unanswered: string[] = [];
  const answers = await Promise.all(
    [...groups].map(async ([name, asked]) => {
      const node = specs.get(name);
      if (node === undefined) return [];
      const body = JSON.stringify({ conversation_ids: asked });
      const answer = await requestBoundedText(`${node.spec.url.replace(/\/+$/, '')}${STREAMS_LOOKUP_PATH}`, {
        dispatcher: deps.pools.get(node.spec),
        method: 'POST',
        headers: upstreamHeaders(deps, req, node, Buffer.byteLength(body)),
        body,
        timeoutMs: LOOKUP_TIMEOUT_MS,
        maxBytes: LOOKUP_ANSWER_MAX_BYTES,
      });
      const entries = !answer.ok
        ? answer.error
        : answer.status !== 200
          ? `status ${answer.status}`
          : ownedEntries(answer.text, new Set(asked));
      if (typeof entries !== 'string') return entries;
      unanswered.push(`${name}: ${entries}`.replace(/[^\x20-\x7e]/g, ' '));
      return [];
    }),
  );
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(answers.flat());
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(unanswered.length === 0 ? {} : { 'x-switchyard-unanswered': unanswered.join('; ') }),
  });
  res.end(text);
}
