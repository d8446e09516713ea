// `switchyard check-config FILE`: load and validate a config exactly as `serve` would, then print
// every problem — each value's and the entries' against each other, in one run — (exit 1) or a
// summary of what the gateway would run with, a line per section (config-summary.ts; exit 0).
// API keys are never printed; the summary only says whether a node has one.
import { formatProblems } from '#src/config/index.ts';
import { loadConfigFile } from '#src/config-tables.ts';
import { describeConfig } from './config-summary.ts';
import type { Command } from './io.ts';
import { CHECK_CONFIG_USAGE } from './command-usage.ts';

export const runCheckConfig: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(CHECK_CONFIG_USAGE);
    return 0;
  }
  const file = configFileArgument(argv);
  if (file === undefined) {
    io.stderr.write(CHECK_CONFIG_USAGE);
    return 2;
  }
  const result = await loadConfigFile(file, io.env);
  if (!result.ok) {
    const count = result.problems.length;
    io.stderr.write(`${formatProblems(result.problems)}\n${count} ${count === 1 ? 'problem' : 'problems'} in ${file}\n`);
    return 1;
  }
  io.stdout.write(`${file} is valid\n${describeConfig(result.config).join('\n')}\n`);
  return 0;
};

/** Exactly one file, positional or as `--config FILE`; anything else is a usage error. */
function configFileArgument(argv: readonly string[]): string | undefined {
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--config') {
      const value = argv[++i];
      if (value === undefined) return undefined;
      files.push(value);
    } else if (arg.startsWith('--config=')) files.push(arg.slice('--config='.length));
    else if (arg.startsWith('-')) return undefined;
    else files.push(arg);
  }
  return files.length === 1 && files[0] !== '' ? files[0] : undefined;
}
