// Pure: whether a command's arguments are only the options it takes. Checked for every command
// before it runs, so a misspelt or unknown option (`serve --bogus`, `status --urll X`) is a usage
// error that names it instead of being ignored while the command runs with its defaults.

export interface AcceptedOptions {
  /** Options that take a value, as `--name value` or `--name=value`. */
  readonly valued: readonly string[];
  /** Options that take none. */
  readonly flags?: readonly string[];
  /** Arguments that are not options (a file, URLs); none when absent. */
  readonly positionals?: 'none' | 'any';
}

/** Every command answers these (runCli prints its usage). */
const HELP: ReadonlySet<string> = new Set(['--help', '-h']);

/** A message naming the first argument the command does not take, or undefined when all are fine. */
export function optionsProblem(argv: readonly string[], accepted: AcceptedOptions): string | undefined {
  const flags = accepted.flags ?? [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (HELP.has(arg)) continue;
    if (!arg.startsWith('-') || arg === '-') {
      if (accepted.positionals !== 'any') return `unexpected argument '${arg}'`;
      continue;
    }
    const equals = arg.indexOf('=');
    const name = arg.startsWith('--') ? (equals === -1 ? arg.slice(2) : arg.slice(2, equals)) : '';
    if (accepted.valued.includes(name)) {
      if (equals === -1) {
        if (argv[i + 1] === undefined) return `--${name} needs a value`;
        i++;
      }
    } else if (flags.includes(name)) {
      if (equals !== -1) return `--${name} takes no value`;
    } else {
      return `unknown option '${equals === -1 ? arg : arg.slice(0, equals)}'`;
    }
  }
  return undefined;
}
