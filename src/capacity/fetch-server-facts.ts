// I/O: what a node says of itself (src/kinds/server-facts.ts): its version, and for a
// `kind = "auto"` node which kind it is. The kind names the GETs (none loads a model) and reads
// the answers; they are asked at once, within one `timeoutMs`, each bounded to `maxBytes`.

import type { Dispatcher } from 'undici';
import type { NodeSpec } from '#src/config/types.ts';
import { deadline } from '#src/core/deadline.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { factsPaths, readFacts, type ServerFacts } from '#src/kinds/index.ts';

export interface FetchFactsOptions {
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly signal?: AbortSignal;
}

export async function fetchServerFacts(node: NodeSpec, options: FetchFactsOptions): Promise<ServerFacts> {
  const paths = factsPaths(node.kind);
  if (paths.length === 0) return {};
  const bound = deadline(options.timeoutMs, options.signal);
  const answers = new Map<string, JsonAnswer>();
  try {
    await Promise.all(
      paths.map(async (path) => {
        const answer = await requestBoundedJson(node.url + path, {
          dispatcher: options.dispatcher,
          headers: node.apiKey === undefined ? {} : { authorization: `Bearer ${node.apiKey}` },
          timeoutMs: options.timeoutMs,
          maxBytes: options.maxBytes,
          signal: bound.signal,
        });
        answers.set(path, answer);
      }),
    );
  } finally {
    bound.done();
  }
  return readFacts(node.kind, (path) => answers.get(path));
}
