// argv → command. Signals become an AbortSignal so every command shuts down the same way.

import type { CliIo, Command } from './io.ts';
import { runServe } from './serve.ts';
import { runCheckConfig } from './check-config.ts';
import { runSim } from './sim.ts';
import { runDemo } from './demo.ts';

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: runServe,
  'check-config': runCheckConfig,
  sim: runSim,
  demo: runDemo,
};

const USAGE = `usage: switchyard <command> [options]

commands:
  serve --config FILE [--log-format json|pretty]   run the gateway
  check-config FILE                                validate a config; print every problem
  sim --config FILE                                run a simulated fleet of inference servers
  demo [--port N]                                  a simulated fleet and a gateway, on loopback
`;

export async function runCli(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`switchyard: unknown command '${name}'\n\n${USAGE}`);
    return 2;
  }
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env, signal: controller.signal };
  try {
    return await command(rest, io);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
