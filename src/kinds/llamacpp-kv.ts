// Pure: how a llama-server shares KV cache between its slots, read from the command line a router
// lists for each model (`status.args`). llama.cpp turns unified KV on by itself when the slot count
// is automatic (`-np` absent or -1); an explicit slot count without `-kvu` runs per-slot KV.
// Found in front of a real router (b10587, `-c 1024 -np 2`): args `--parallel 2`, no `-kvu`, and the
// server ran with kv_unified = false — n_ctx 512 per slot, two requests at a time.

export type ServerKvMode = 'unified' | 'per-slot';

const UNIFIED: ReadonlySet<string> = new Set(['--kv-unified', '-kvu']);
const NOT_UNIFIED: ReadonlySet<string> = new Set(['--no-kv-unified', '-no-kvu']);
const PARALLEL: ReadonlySet<string> = new Set(['--parallel', '-np']);

/** The flag and its value, for both `-np 2` and `--parallel=2`. */
function flagsOf(args: readonly string[]): Map<string, string | undefined> {
  const flags = new Map<string, string | undefined>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('-')) continue;
    const eq = arg.indexOf('=');
    if (eq > 0) flags.set(arg.slice(0, eq), arg.slice(eq + 1));
    else flags.set(arg, args[i + 1]);
  }
  return flags;
}

/** The KV mode a router's child runs with, from its args; undefined = not a llama-server command line. */
export function kvModeFromArgs(args: readonly string[]): ServerKvMode | undefined {
  if (args.length === 0) return undefined;
  const flags = flagsOf(args);
  const has = (names: ReadonlySet<string>): boolean => [...names].some((n) => flags.has(n));
  if (has(UNIFIED)) return 'unified';
  if (has(NOT_UNIFIED)) return 'per-slot';
  const parallel = [...PARALLEL].map((n) => flags.get(n)).find((v) => v !== undefined);
  // -np -1 (or no -np) is the automatic slot count, under which llama.cpp unifies the KV cache.
  if (parallel !== undefined && Number(parallel) !== -1) return 'per-slot';
  return 'unified';
}

/** `status.args` of a router's listing entry, when it is an array of strings. */
export function routerArgsOf(status: unknown): readonly string[] | undefined {
  if (typeof status !== 'object' || status === null || Array.isArray(status)) return undefined;
  const args = (status as Record<string, unknown>)['args'];
  return Array.isArray(args) && args.every((a) => typeof a === 'string') ? (args as string[]) : undefined;
}
