// argv → command. Signals become an AbortSignal so every command shuts down the same way; SIGHUP
// reloads `serve` and stops the others; failures no code caught follow src/cli/crash-policy.ts.

import type { CliIo, Command } from './io.ts';
import { HangupRelay } from './hangups.ts';
import { EXIT_INTERNAL_ERROR, installCrashPolicy } from './crash-policy.ts';
import { commandHelp, packageVersion, USAGE, wantsHelp } from './usage.ts';
import { optionsProblem, type AcceptedOptions } from './options.ts';

interface CommandEntry {
  /**
   * Imports the command's module when it is about to run, never before: `--version`, `--help` and
   * a refused option load none of them, and `status` does not load the gateway (or libp2p).
   */
  readonly load: () => Promise<Command>;
  /** What SIGHUP means for it: re-read the config, or stop like SIGINT (a closed terminal). */
  readonly onHangup: 'reload' | 'stop';
  /** What it takes; anything else is refused (exit 2) before it runs. */
  readonly options: AcceptedOptions;
}

const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  serve: {
    load: async () => (await import('./serve.ts')).runServe,
    onHangup: 'reload',
    options: { valued: ['config', 'log-format'] },
  },
  'check-config': {
    load: async () => (await import('./check-config.ts')).runCheckConfig,
    onHangup: 'stop',
    options: { valued: ['config'], positionals: 'any' },
  },
  sim: { load: async () => (await import('./sim.ts')).runSim, onHangup: 'stop', options: { valued: ['config'] } },
  demo: { load: async () => (await import('./demo.ts')).runDemo, onHangup: 'stop', options: { valued: ['port'] } },
  init: {
    load: async () => (await import('./init.ts')).runInit,
    onHangup: 'stop',
    options: { valued: ['out', 'listen', 'timeout', 'resolver'], flags: ['force'], positionals: 'any' },
  },
  status: {
    load: async () => (await import('./status.ts')).runStatus,
    onHangup: 'stop',
    options: { valued: ['url', 'config', 'token'], flags: ['watch'] },
  },
  models: {
    load: async () => (await import('./models.ts')).runModels,
    onHangup: 'stop',
    options: { valued: ['url', 'config', 'token', 'node'], positionals: 'any' },
  },
  batches: {
    load: async () => (await import('./batches.ts')).runBatches,
    onHangup: 'stop',
    options: { valued: ['url', 'config', 'token'] },
  },
  // A feature's command (feature-commands.ts, the CLI's feature list): the mesh's site key.
  keygen: { load: async () => (await import('./feature-commands.ts')).runKeygen, onHangup: 'stop', options: { valued: ['out'] } },
};

export interface CliStart {
  /** SIGHUPs the entry shim caught before this ran (while the sources loaded). */
  readonly hangupsBeforeStart: number;
}

/**
 * Runs one command. Installs its SIGHUP listener before its first await, so an entry shim may
 * drop its own early listener as soon as this returns its promise.
 */
export async function runCli(argv: readonly string[], start: CliStart = { hangupsBeforeStart: 0 }): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`switchyard ${packageVersion()}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`switchyard: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  const help = commandHelp(name);
  if (help !== undefined && wantsHelp(rest)) {
    process.stdout.write(help);
    return 0;
  }
  const problem = optionsProblem(rest, command.options);
  if (problem !== undefined) {
    process.stderr.write(`switchyard ${name}: ${problem}\n\n${help ?? `switchyard ${name} --help lists what it takes\n`}`);
    return 2;
  }
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  const hangups = new HangupRelay(command.onHangup === 'reload' ? start.hangupsBeforeStart : 0);
  const onHangup = command.onHangup === 'reload' ? () => hangups.notify() : stop;
  if (command.onHangup === 'stop' && start.hangupsBeforeStart > 0) stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.on('SIGHUP', onHangup);
  const crashPolicy = installCrashPolicy(process, {
    report: (line) => process.stderr.write(`${line}\n`),
    shutDown: stop,
    exitNow: (code) => process.exit(code),
  });
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal, hangups };
  try {
    const run = await command.load();
    const code = await run(rest, io);
    return crashPolicy.crashed() ? EXIT_INTERNAL_ERROR : code;
  } finally {
    crashPolicy.uninstall();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.off('SIGHUP', onHangup);
  }
}
