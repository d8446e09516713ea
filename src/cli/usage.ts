// What `switchyard --help`, `switchyard COMMAND --help` and `switchyard --version` print.

import { readFileSync } from 'node:fs';
import { CHECK_CONFIG_USAGE, INIT_USAGE, KEYGEN_USAGE, SERVE_USAGE } from './command-usage.ts';

export const USAGE = `usage: switchyard <command> [options]     (switchyard <command> --help for its options)

commands:
  init URL [URL...] [--out FILE]                   probe servers, detect their kinds, write a config
  serve [--config FILE] [--log-format json|pretty] run the gateway
  check-config FILE                                validate a config; print every problem
  sim --config FILE                                run a simulated fleet of inference servers
  demo [--port N]                                  a simulated fleet and a gateway, on loopback
  status [--url GATEWAY] [--token T] [--watch]     the fleet as a table; exit 1 if a node is dead
  models [load|unload MODEL] [--node N]            models loaded, on demand, desired; load or unload one
  batches [--url GATEWAY] [--token T]              batch jobs: status, progress, failures, rate, ETA
  keygen --out FILE                                write a new site key for [mesh]; print its public key

  --version                                        print the version
`;

const COMMAND_HELP: Readonly<Record<string, string>> = {
  init: INIT_USAGE,
  serve: SERVE_USAGE,
  'check-config': CHECK_CONFIG_USAGE,
  keygen: KEYGEN_USAGE,
  sim: `usage: switchyard sim --config FILE

Runs a simulated fleet of inference servers (docs/simulator.md); one JSON line on stdout names
their URLs. examples/fleet.toml has one node of every kind.
`,
  demo: `usage: switchyard demo [--port N]

A simulated fleet (one node of every kind) and a gateway in front of it, all on 127.0.0.1, until
Ctrl-C. The gateway listens on port N (default: a free port, printed at start).
`,
};

/** The help of a command that has it here; a command without an entry answers --help itself. */
export function commandHelp(name: string): string | undefined {
  return COMMAND_HELP[name];
}

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** The version in package.json, read when asked (the package's own file, next to src/). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}
