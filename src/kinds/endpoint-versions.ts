// Pure: the first release of each kind of server that serves an endpoint, and whether a version a
// node states predates it. A node known to predate an endpoint is excluded for it before any
// request is sent; an unknown or unreadable version is never judged (the node is asked, and a
// route-level 404 teaches the rest: endpoints.ts `routeMissing`). Only firsts read from the
// servers' own histories are recorded (docs/protocols-endpoints.md names them): a guess here
// would refuse a server that serves the endpoint.

import type { InferenceEndpoint, NodeKind } from '#src/config/index.ts';

type Firsts = Partial<Record<InferenceEndpoint, string>>;

/**
 * llama.cpp: the build number is the commit count of its tree (`build_info` `b<count>-<commit>`);
 * each first is the count at the commit that added the route to `tools/server/server.cpp`
 * (`git log -S` in ggml-org/llama.cpp's history): rerank #9510 (b3838), Anthropic Messages with
 * count_tokens #17570 (b7187), `/v1/responses` #18486 (b7793), transcriptions #21863 (b8784).
 * Ollama: the Anthropic compatibility layer (`/v1/messages`) came with 0.14.0.
 * vLLM (its `GET /version`): `vllm serve` gained `/v1/messages` with vllm-project/vllm #27882
 * ("Adds anthropic /v1/messages endpoint to openai api_server", after v0.11.0), first released in
 * v0.11.1 (its release notes: "Added support for the /v1/messages endpoint, allowing users to
 * interact with vllm serve using Anthropic-compatible clients"). Its other routes' firsts were
 * not read (no history at hand): never judged. SGLang states no version the gateway reads.
 */
const FIRSTS: Readonly<Partial<Record<NodeKind, Readonly<Firsts>>>> = Object.freeze({
  llamacpp: Object.freeze({
    '/rerank': 'b3838',
    '/reranking': 'b3838',
    '/v1/rerank': 'b3838',
    '/v1/reranking': 'b3838',
    '/v1/messages': 'b7187',
    '/v1/messages/count_tokens': 'b7187',
    '/v1/responses': 'b7793',
    '/v1/audio/transcriptions': 'b8784',
  }),
  ollama: Object.freeze({
    '/v1/messages': '0.14.0',
  }),
  vllm: Object.freeze({
    '/v1/messages': '0.11.1',
  }),
});

/** The first version of `kind` that serves `endpoint`; undefined = not recorded (never judged). */
export function firstVersion(kind: NodeKind, endpoint: InferenceEndpoint): string | undefined {
  return FIRSTS[kind]?.[endpoint];
}

/**
 * Versions that name no release, so never judged: `0.0.0` (no release is; the placeholder of a
 * build stamped with no version), and setuptools_scm's guess in a checkout without release tags
 * (vLLM built so states `0.1.dev7557+g977180c` or `0.1.dev1+gb22b798.d20241006.cu126`:
 * vllm-project/vllm #20664, #9119) — current code under a number that would read as ancient.
 */
const UNSTAMPED: readonly RegExp[] = Object.freeze([/^v?0\.0\.0(?:\D|$)/, /^v?0\.1\.dev\d/]);

/**
 * A version read as numbers to compare: llama.cpp's `b10587-3f545bec` → [10587]; a release
 * `0.14.0`, `v0.11.2rc1`, `0.6.4.post1`, `0.10.1.1` → [0, 14, 0] (a pre-, post- or patch release
 * counts as its release: never judged older than it is). Undefined = unreadable, or unstamped.
 */
export function versionNumbers(kind: NodeKind, version: string): readonly number[] | undefined {
  const text = version.trim();
  if (kind === 'llamacpp') {
    const build = /^b(\d{1,9})(?:\D|$)/.exec(text);
    return build === null ? undefined : [Number(build[1])];
  }
  if (UNSTAMPED.some((form) => form.test(text))) return undefined;
  const release = /^v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?/.exec(text);
  return release === null ? undefined : [Number(release[1]), Number(release[2]), Number(release[3] ?? 0)];
}

/** Negative when a < b, 0 equal, positive when a > b (missing parts are 0). */
function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Why a node of `kind` at `version` lacks `endpoint`, when its version is known to predate the
 * endpoint's first release (e.g. `its version b7000 predates POST /v1/messages (llamacpp serves it
 * from b7187)`); undefined when it does not, or either version is unknown or unreadable. Pure.
 */
export function predatesEndpoint(kind: NodeKind, version: string | undefined, endpoint: InferenceEndpoint): string | undefined {
  if (version === undefined) return undefined;
  const first = firstVersion(kind, endpoint);
  if (first === undefined) return undefined;
  const have = versionNumbers(kind, version);
  const need = versionNumbers(kind, first);
  if (have === undefined || need === undefined || compare(have, need) >= 0) return undefined;
  return `its version ${version} predates POST ${endpoint} (${kind} serves it from ${first})`;
}
