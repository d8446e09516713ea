// What a CLI command may touch: its output streams, the environment, and a signal that ends it.

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop when it fires. */
  readonly signal: AbortSignal;
}

export type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

/** Reads `--name value` or `--name=value` from argv; undefined when absent. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === `--${name}`) return argv[i + 1];
    if (arg?.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}

export function hasFlag(argv: readonly string[], name: string): boolean {
  return argv.includes(`--${name}`);
}
