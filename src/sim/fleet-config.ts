// Parses the sim TOML (docs/simulator.md) into a FleetSpec, or into every problem found, each named
// by its key path (`node[1].kind`). Unknown keys are errors so typos do not silently fall back.

import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { parseDurationMs } from '#src/sim/duration.ts';
import {
  ANSWER_MODES,
  KV_MODES,
  MODEL_STATUSES,
  SIM_KINDS,
  nodeSpecProblems,
  resolveNodeSpec,
  type FleetSpec,
  type SimModelSpec,
  type SimNodeSpec,
} from '#src/sim/spec.ts';

export interface FleetConfigProblem {
  readonly path: string;
  readonly message: string;
}

export type FleetConfigResult =
  { readonly ok: true; readonly spec: FleetSpec } | { readonly ok: false; readonly problems: readonly FleetConfigProblem[] };

const durationMs = z.string().transform((text, ctx) => {
  const ms = parseDurationMs(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `not a duration: "${text}" (write e.g. "50ms" or "2s")` });
    return z.NEVER;
  }
  return ms;
});

const positiveInt = z.int().positive();

const ModelTable = z.strictObject({
  id: z.string().min(1),
  aliases: z.array(z.string().min(1)).optional(),
  context: positiveInt.optional(),
  slots: positiveInt.optional(),
  status: z.enum(MODEL_STATUSES).optional(),
  size: z.int().nonnegative().optional(),
  fails_to_load: z.boolean().optional(),
});

const NodeTable = z.strictObject({
  name: z.string().min(1).optional(),
  kind: z.enum(SIM_KINDS),
  port: z.int().min(0).max(65_535).optional(),
  context: positiveInt.optional(),
  slots: positiveInt.optional(),
  kv: z.enum(KV_MODES).optional(),
  ttft: durationMs.optional(),
  tokens_per_second: z.number().positive().optional(),
  load_time: durationMs.optional(),
  request_end_lag: durationMs.optional(),
  unload_time: durationMs.optional(),
  models_max: z.int().nonnegative().optional(),
  autoload: z.boolean().optional(),
  api_key: z.string().min(1).optional(),
  metrics: z.boolean().optional(),
  version: z.string().min(1).max(64).optional(),
  answers: z.enum(ANSWER_MODES).optional(),
  prefix_cache_ttft: durationMs.optional(),
  models: z.array(z.string().min(1)).optional(),
  model: z.array(ModelTable).optional(),
});

const NO_NODES = 'the file defines no [[node]] table';

const FleetFile = z.strictObject({
  node: z.array(NodeTable, { error: (issue) => (issue.input === undefined ? NO_NODES : undefined) }).min(1, NO_NODES),
});

type NodeTable = z.infer<typeof NodeTable>;

function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

function issueProblems(issues: readonly z.core.$ZodIssue[]): FleetConfigProblem[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: 'unknown key' }));
    }
    return [{ path: formatPath(issue.path) || '(file)', message: issue.message }];
  });
}

function toNodeSpec(table: NodeTable): SimNodeSpec {
  const models: (string | SimModelSpec)[] = [
    ...(table.models ?? []),
    ...(table.model ?? []).map((m) => ({
      id: m.id,
      aliases: m.aliases,
      contextTokens: m.context,
      slots: m.slots,
      status: m.status,
      sizeBytes: m.size,
      ...(m.fails_to_load === undefined ? {} : { failsToLoad: m.fails_to_load }),
    })),
  ];
  return {
    kind: table.kind,
    models,
    name: table.name,
    port: table.port,
    contextTokens: table.context,
    slots: table.slots,
    kv: table.kv,
    ttftMs: table.ttft,
    tokensPerSecond: table.tokens_per_second,
    loadTimeMs: table.load_time,
    requestEndLagMs: table.request_end_lag,
    unloadTimeMs: table.unload_time,
    modelsMax: table.models_max,
    autoload: table.autoload,
    apiKey: table.api_key,
    metrics: table.metrics,
    version: table.version,
    ...(table.answers === undefined ? {} : { answers: table.answers }),
    ...(table.prefix_cache_ttft === undefined ? {} : { prefixCacheTtftMs: table.prefix_cache_ttft }),
  };
}

function nodeProblems(table: NodeTable, index: number, names: Set<string>): FleetConfigProblem[] {
  const at = `node[${index}]`;
  const problems: FleetConfigProblem[] = [];
  if (table.models !== undefined && table.model !== undefined) {
    problems.push({ path: `${at}.models`, message: 'use either models = [...] or [[node.model]], not both' });
    return problems;
  }
  const resolved = resolveNodeSpec(toNodeSpec(table), index);
  if (names.has(resolved.name)) problems.push({ path: `${at}.name`, message: `duplicate node name '${resolved.name}'` });
  names.add(resolved.name);
  const modelsKey = table.model !== undefined ? 'model' : 'models';
  for (const problem of nodeSpecProblems(resolved, modelsKey)) {
    problems.push({ path: `${at}.${problem.path}`, message: problem.message });
  }
  return problems;
}

export function parseFleetConfig(tomlText: string): FleetConfigResult {
  let document: unknown;
  try {
    document = parseToml(tomlText);
  } catch (error) {
    const message = error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
    const position = error instanceof Error && 'line' in error ? ` (line ${String(error.line)})` : '';
    return { ok: false, problems: [{ path: '(syntax)', message: `${message}${position}` }] };
  }
  const parsed = FleetFile.safeParse(document);
  if (!parsed.success) return { ok: false, problems: issueProblems(parsed.error.issues) };
  const names = new Set<string>();
  const problems = parsed.data.node.flatMap((table, index) => nodeProblems(table, index, names));
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, spec: { nodes: parsed.data.node.map(toNodeSpec) } };
}
