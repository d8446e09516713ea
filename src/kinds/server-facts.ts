// What a node says of itself apart from its models: the version it runs (vLLM's `GET /version`,
// Ollama's `GET /api/version`, llama-server's `build_info` in `/props`) and, for a `kind = "auto"`
// node, which kind its answers show it to be. Kind knowledge: the paths and how each answer is
// read live here; the bounded GETs are the capacity poll's (src/capacity/fetch-server-facts.ts).

import type { NodeKind } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import { okBody } from './detection.ts';
import { serverKind } from './registry.ts';
import type { ProbeAnswers } from './server-kind.ts';

export type KnownKind = Exclude<NodeKind, 'auto'>;

export interface ServerFacts {
  /** What a `kind = "auto"` node turned out to be (its detector's reading); absent = not told apart, or the kind is configured. */
  readonly detected?: KnownKind;
  /** For the operator: the answer that told it apart (e.g. `GET /api/version answers {"version": …}`). */
  readonly evidence?: string;
  /** The version the server states, as it states it (`0.14.0`, llama.cpp's `b10587-3f545bec`); absent = it states none. */
  readonly version?: string;
}

export interface VersionDialect {
  /** The GET that answers the version (never loads a model). */
  readonly path: string;
  /** The version in its JSON answer; undefined = not stated. Pure. */
  parse(body: unknown): string | undefined;
}

const VERSION_MEMBER = (body: unknown): string | undefined =>
  isRecord(body) && typeof body.version === 'string' && body.version !== '' ? body.version.slice(0, 64) : undefined;

/**
 * Where each kind states its version: vLLM `GET /version` → `{"version":"0.x.y"}` (PROTOCOLS.md §2);
 * Ollama `GET /api/version` → `{"version":"0.x.y"}` (§3); llama-server's plain `/props` carries
 * `build_info` (`b<build>-<commit>`, single server and router alike, §1.5). SGLang and plain OpenAI
 * servers: none read.
 */
const VERSION_DIALECTS: Readonly<Partial<Record<NodeKind, VersionDialect>>> = Object.freeze({
  vllm: Object.freeze({ path: '/version', parse: VERSION_MEMBER }),
  ollama: Object.freeze({ path: '/api/version', parse: VERSION_MEMBER }),
  llamacpp: Object.freeze({
    path: '/props',
    parse: (body: unknown) =>
      isRecord(body) && typeof body.build_info === 'string' && body.build_info !== '' ? body.build_info.slice(0, 64) : undefined,
  }),
});

export function versionDialect(kind: NodeKind): VersionDialect | undefined {
  return VERSION_DIALECTS[kind];
}

/** The kind a node is judged as: its configured kind, or for `auto` the kind its answers showed. Pure. */
export function kindOfNode(kind: NodeKind, facts: ServerFacts | undefined): NodeKind {
  return kind === 'auto' && facts?.detected !== undefined ? facts.detected : kind;
}

export function sameFacts(a: ServerFacts | undefined, b: ServerFacts | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.detected === b.detected && a.version === b.version && a.evidence === b.evidence;
}

/**
 * The GETs that tell a node's facts (none loads a model): its kind's version path; for `auto`,
 * every detector's paths and every version path, asked at once. Pure.
 */
export function factsPaths(kind: NodeKind): readonly string[] {
  if (kind !== 'auto') {
    const dialect = versionDialect(kind);
    return dialect === undefined ? [] : [dialect.path];
  }
  const versions = Object.values(VERSION_DIALECTS).map((d) => d.path);
  return [...new Set([...serverKind('auto').detector.paths, ...versions])];
}

/** The facts in the answers to `factsPaths(kind)`: for `auto` the detected kind first, then its version. Pure. */
export function readFacts(kind: NodeKind, answers: ProbeAnswers): ServerFacts {
  let judged = kind;
  let told: Pick<ServerFacts, 'detected' | 'evidence'> = {};
  if (kind === 'auto') {
    const detection = serverKind('auto').detector.detect(answers);
    if (detection === undefined) return {};
    judged = detection.kind;
    told = { detected: detection.kind, evidence: detection.evidence };
  }
  const dialect = versionDialect(judged);
  const body = dialect === undefined ? undefined : okBody(answers, dialect.path);
  const version = dialect === undefined || body === undefined ? undefined : dialect.parse(body);
  return version === undefined ? told : { ...told, version };
}
