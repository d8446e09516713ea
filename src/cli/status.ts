// `switchyard status [--url GATEWAY] [--token T] [--watch]`: the fleet as a terminal table from
// GET /admin/hosts. Exit 0 when every node is alive, 1 when some node is dead, 3 when the gateway
// cannot be read (down, refused, not a gateway, or a status word this CLI does not know), 2 on a
// usage error: usable from scripts and cron. Every string the gateway sent is printed made visible
// (src/core/visible-text.ts): none can steer the terminal. `--watch` redraws every second until Ctrl-C.

import { sleep, systemClock, type Clock } from '#src/core/clock.ts';
import { flagValue, hasFlag, type CliIo, type Command } from './io.ts';
import { fetchHostsReport } from './status-report.ts';
import { visibleText } from '#src/core/visible-text.js';
import { DEFAULT_STATUS_URL, findStatusTarget } from './status-target.ts';
import {
  modelNotes,
  STATUS_GATEWAY_DOWN,
  switchQueueNotes,
  statusExitCode,
  statusSummary,
  statusTable,
  unknownStatuses,
} from './status-table.ts';

const USAGE = `usage: switchyard status [--url GATEWAY] [--token T] [--watch] [--config FILE]

  --url GATEWAY   the gateway's admin address; without it, the admin (else main) listen address
                  of the config serve would run (--config FILE, ./switchyard.toml, then
                  /etc/switchyard/switchyard.toml), or http://127.0.0.1:8080 when there is none
  --config FILE   the config to take the address (and [admin] token) from
  --token T       the admin token; or set SWITCHYARD_ADMIN_TOKEN; else the config's [admin] token
  --watch         redraw every second until Ctrl-C

exit: 0 every node alive, 1 some node dead, 3 gateway down, refused, or reporting a status
      word this version does not know, 2 usage error
`;

const WATCH_INTERVAL_MS = 1_000;
/** Moves the cursor home and clears the screen, so each redraw replaces the last. */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';
const KNOWN_FLAGS: ReadonlySet<string> = new Set(['--url', '--config', '--token', '--watch']);

/**
 * The system clock with timers that keep the process alive: systemClock's are unref'd (a loop's
 * timer must not hold a gateway open), but between two redraws nothing else is pending.
 */
const WATCH_CLOCK: Clock = Object.freeze({
  now: systemClock.now,
  monotonicMs: systemClock.monotonicMs,
  setTimeout(fn: () => void, ms: number) {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle) };
  },
});

export const runStatus: Command = (argv, io) => statusCommand(WATCH_CLOCK)(argv, io);

export function statusCommand(clock: Clock): Command {
  return async (argv, io) => {
    if (hasFlag(argv, 'help') || argv.includes('-h')) {
      io.stdout.write(USAGE);
      return 0;
    }
    const problem = usageProblem(argv);
    if (problem !== undefined) {
      io.stderr.write(`switchyard status: ${problem}\n\n${USAGE}`);
      return 2;
    }
    const given = flagValue(argv, 'url');
    const found = given === undefined ? await findStatusTarget(flagValue(argv, 'config'), io.env) : undefined;
    if (found?.ok === false) {
      io.stderr.write(`switchyard status: ${found.problem}\n`);
      return 2;
    }
    const url = given ?? (found?.ok === true ? found.target.url : DEFAULT_STATUS_URL);
    const token =
      flagValue(argv, 'token') ?? io.env.SWITCHYARD_ADMIN_TOKEN ?? (found?.ok === true ? found.target.token : undefined);
    if (!hasFlag(argv, 'watch')) return showOnce(url, token, io, clock, '');
    let code = 0;
    while (!io.signal.aborted) {
      code = await showOnce(url, token, io, clock, CLEAR_SCREEN);
      try {
        await sleep(clock, WATCH_INTERVAL_MS, io.signal);
      } catch {
        break;
      }
    }
    return code;
  };
}

async function showOnce(url: string, token: string | undefined, io: CliIo, clock: Clock, prefix: string): Promise<number> {
  const answer = await fetchHostsReport(url, token, io.signal);
  const heading = `switchyard status  ${url}  ${new Date(clock.now()).toISOString()}`;
  if (!answer.ok) {
    io.stdout.write(`${prefix}${heading}\n`);
    io.stderr.write(`switchyard status: cannot read ${url}/admin/hosts: ${visibleText(answer.error)}\n`);
    return STATUS_GATEWAY_DOWN;
  }
  const notes = [...switchQueueNotes(answer.report), ...modelNotes(answer.report)];
  const lines = [
    heading,
    statusSummary(answer.report),
    '',
    ...statusTable(answer.report),
    ...(notes.length === 0 ? [] : ['', ...notes]),
  ];
  io.stdout.write(`${prefix}${lines.join('\n')}\n`);
  for (const problem of unknownStatuses(answer.report)) io.stderr.write(`switchyard status: ${problem}\n`);
  return statusExitCode(answer.report);
}

/** Every argument is a known flag (with its value where it takes one); the URL parses. */
function usageProblem(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const name = arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (!KNOWN_FLAGS.has(name)) return `unexpected argument '${arg}'`;
    if (name !== '--watch' && !arg.includes('=')) {
      if (argv[i + 1] === undefined) return `${name} needs a value`;
      i++;
    }
  }
  const url = flagValue(argv, 'url');
  if (url !== undefined && flagValue(argv, 'config') !== undefined) return 'give --url or --config, not both';
  if (url !== undefined && !URL.canParse(url)) return `--url '${url}' is not a URL, e.g. http://127.0.0.1:8080`;
  if (url !== undefined && !/^https?:$/.test(new URL(url).protocol)) return `--url must be http:// or https://, got '${url}'`;
  return undefined;
}
