// What a CLI command may touch: its output streams, the environment, a signal that ends it, and
// the SIGHUPs it is sent.

import type { Hangups } from './hangups.ts';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGINT/SIGTERM; long-running commands stop when it fires. */
  readonly signal: AbortSignal;
  /** SIGHUPs, for commands that reload on them (the others are stopped by SIGHUP instead). */
  readonly hangups: Hangups;
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
