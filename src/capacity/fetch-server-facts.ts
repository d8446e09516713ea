// I/O: what a node says of itself (src/kinds/server-facts.ts): its version, and for a
// `kind = "auto"` node which kind it is. GETs only, none of which loads a model (the detectors'
// paths and the version paths), all within one `timeoutMs` and `maxBytes` each.

import type { Dispatcher } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import { deadline } from '#src/core/deadline.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { serverKind, versionDialect, type ServerFacts } from '#src/kinds/index.ts';

export interface FetchFactsOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
}

export async function fetchServerFacts(node: NodeSpec, options: FetchFactsOptions): Promise<ServerFacts> {
  const bound = deadline(options.timeoutMs, options.signal);
  const answers = new Map<string, JsonAnswer>();
  const get = async (path: string): Promise<JsonAnswer> => {
    const known = answers.get(path);
    if (known !== undefined) return known;
    const answer = await requestBoundedJson(node.url + path, {
      dispatcher: options.dispatcher,
      headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      signal: bound.signal,
    });
    answers.set(path, answer);
    return answer;
  };
  try {
    let kind = node.kind;
    let told: Pick<ServerFacts, 'detected' | 'evidence'> = {};
    if (kind === 'auto') {
      const detector = serverKind('auto').detector;
      await Promise.all(detector.paths.map((path) => get(path)));
      const detection = detector.detect((path) => answers.get(path));
      if (detection === undefined) return {};
      kind = detection.kind;
      told = { detected: detection.kind, evidence: detection.evidence };
    }
    const dialect = versionDialect(kind);
    if (dialect === undefined || bound.signal.aborted) return told;
    const answer = await get(dialect.path);
    const version = answer.ok && answer.status >= 200 && answer.status < 300 ? dialect.parse(answer.body) : undefined;
    return version === undefined ? told : { ...told, version };
  } finally {
    bound.done();
  }
}
