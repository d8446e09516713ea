// I/O for `switchyard init`: asks one URL the GETs every kind's detector needs (none loads a model),
// reads the kind from the answers, then its models and their figures the way the gateway would: the
// listing, and the kind's capacity request (a router is asked only about models it has loaded, with
// `autoload=false`). Every GET is bounded in time and bytes; nothing here throws.

import type { Dispatcher } from 'undici';
import { fetchCapacity, FIRST_ROUND, NO_CAPACITY } from '#src/capacity/index.ts';
import { CONFIG_DEFAULTS, type NodeSpec } from '#src/config/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { limitListing, parseModelList } from '#src/discovery/index.ts';
import { serverKind } from '#src/kinds/index.ts';
import { surveyedModels, type NodeSurvey } from './init-survey.ts';

export interface ProbeOptions {
  readonly dispatcher: Dispatcher;
  /** Bound on each GET: connect, headers and body. */
  readonly timeoutMs: number;
  /** Bound on each answer's body. */
  readonly maxBytes: number;
  /** Per-model questions to a router at most (only its loaded models are asked). */
  readonly maxModelQuestions: number;
}

const LISTING_PATH = '/v1/models';

export async function probeUrl(url: string, options: ProbeOptions): Promise<NodeSurvey> {
  const detector = serverKind('auto').detector;
  const get = (path: string): Promise<JsonAnswer> =>
    requestBoundedJson(url + path, {
      dispatcher: options.dispatcher,
      headers: { accept: 'application/json' },
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
    });
  const answers = new Map<string, JsonAnswer>();
  await Promise.all(detector.paths.map(async (path) => answers.set(path, await get(path))));
  const detection = detector.detect((path) => answers.get(path));
  if (detection === undefined) return { url, found: false, reason: unrecognised(answers) };
  const listing = answers.get(LISTING_PATH);
  const parsed = listing?.ok === true ? parseModelList(detection.kind, listing.body) : undefined;
  const { models } = limitListing(parsed?.ok === true ? parsed.models : [], {
    maxModels: CONFIG_DEFAULTS.discovery.maxModelsPerNode,
    maxIdBytes: CONFIG_DEFAULTS.discovery.maxModelIdBytes,
  });
  const node = probedNode(url, detection.kind);
  const reading =
    models.length === 0
      ? { capacity: NO_CAPACITY }
      : await fetchCapacity(node, models, {
          dispatcher: options.dispatcher,
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxBytes,
          requestsPerPoll: options.maxModelQuestions,
          round: FIRST_ROUND,
        });
  return { url, found: true, detection, models: surveyedModels(models, reading.capacity) };
}

/** Why no kind recognised the node, from the listing's answer (every kind answers it). */
function unrecognised(answers: ReadonlyMap<string, JsonAnswer>): string {
  const listing = answers.get(LISTING_PATH);
  if (listing === undefined) return 'not asked';
  if (!listing.ok) {
    const anyStatus = [...answers.values()].some((answer) => answer.status !== undefined);
    if (!anyStatus) return `did not answer (GET ${LISTING_PATH}: ${listing.error})`;
    return `GET ${LISTING_PATH} answered ${listing.status === undefined ? '' : `HTTP ${listing.status}, `}${listing.error}`;
  }
  if (listing.status === 401 || listing.status === 403)
    return `GET ${LISTING_PATH} answered HTTP ${listing.status}: it needs an API key (set api_key)`;
  if (listing.status < 200 || listing.status >= 300) return `GET ${LISTING_PATH} answered HTTP ${listing.status}`;
  return `answers like none of the kinds (GET ${LISTING_PATH} is not an OpenAI model list)`;
}

/** The node as the gateway's own capacity poll takes it; only kind and URL matter to it. */
function probedNode(url: string, kind: NodeSpec['kind']): NodeSpec {
  return {
    name: 'init',
    url,
    apiKey: undefined,
    kind,
    group: undefined,
    kv: 'unified',
    weight: 1,
    wake: undefined,
    wakeTimeoutMs: 0,
  };
}
