// `npm test`'s runner: node's own test runner (`node --test`, one process per test file, its report
// and closing lines unchanged), with bounds no test can defeat:
// - per file: scripts/test-file-bound.ts runs a watchdog thread in every test file's process that
//   SIGKILLs the file (and the processes it started) after --file-bound seconds, even while the
//   file's main thread spins; node reports that file as failed and runs the rest;
// - per run: node's runner and everything below it run in their own process group; after
//   --run-bound minutes, on SIGINT/SIGTERM/SIGHUP, and when the run ends, the whole group is killed,
//   so no process a test started outlives `npm test`. One still running after the run ended is a leak:
//   it is named and fails the run.
//
// usage: node scripts/test.ts [--concurrency N] [--test-timeout MS] [--file-bound S] [--run-bound MIN] [PATTERN...]

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FILE_BOUND_ENV } from './test-file-bound.ts';

const USAGE =
  'usage: node scripts/test.ts [--concurrency N] [--test-timeout MS] [--file-bound SECONDS] [--run-bound MINUTES] [PATTERN...]\n';
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How long node's runner gets to report after a forwarded signal before the group is SIGKILLed. */
const GRACE_MS = 10_000;

interface Options {
  readonly concurrency: number;
  readonly testTimeoutMs: number;
  readonly fileBoundMs: number;
  readonly runBoundMs: number;
  readonly patterns: readonly string[];
}

function fail(message: string): never {
  process.stderr.write(`scripts/test.ts: ${message}\n${USAGE}`);
  process.exit(2);
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) fail(`--${name} must be a positive number, not '${text}'`);
  return value;
}

function parseOptions(argv: readonly string[]): Options {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        concurrency: { type: 'string' },
        'test-timeout': { type: 'string' },
        'file-bound': { type: 'string' },
        'run-bound': { type: 'string' },
      },
    });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  return {
    concurrency: Math.floor(positive('concurrency', values.concurrency, 4)),
    testTimeoutMs: positive('test-timeout', values['test-timeout'], 300_000),
    fileBoundMs: positive('file-bound', values['file-bound'], 600) * 1_000,
    runBoundMs: positive('run-bound', values['run-bound'], 90) * 60_000,
    patterns: positionals.length > 0 ? positionals : ['test/**/*.test.ts'],
  };
}

/** Processes still in the group (not zombies), with their command lines; Linux only, else []. */
function groupMembers(group: number): string[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    if (!/^[0-9]+$/.test(entry)) return [];
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      if (Number(fields[2]) !== group || fields[0] === 'Z') return [];
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      return [`${entry} ${command.slice(0, 200)}`];
    } catch {
      return [];
    }
  });
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // the group is empty
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const env: NodeJS.ProcessEnv = { ...process.env, [FILE_BOUND_ENV]: String(options.fileBoundMs) };
  // A runner started from inside a test file must not think it is that file's child.
  delete env.NODE_TEST_CONTEXT;
  const runner = spawn(
    process.execPath,
    [
      '--import',
      new URL('./test-file-bound.ts', import.meta.url).pathname,
      '--test',
      `--test-concurrency=${options.concurrency}`,
      `--test-timeout=${options.testTimeoutMs}`,
      ...options.patterns,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], env, detached: true },
  );
  const group = runner.pid;
  if (group === undefined) {
    process.stderr.write('scripts/test.ts: could not start node --test\n');
    return 1;
  }
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    runner.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const interrupted = { by: undefined as NodeJS.Signals | undefined };
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted.by = signal;
    killGroup(group, signal);
    setTimeout(() => killGroup(group, 'SIGKILL'), GRACE_MS).unref();
  };
  for (const signal of FORWARDED) process.on(signal, onSignal);
  const runBound = setTimeout(() => {
    process.stderr.write(`\n== the run took longer than ${options.runBoundMs / 60_000} minutes: killing every test process\n`);
    killGroup(group, 'SIGKILL');
  }, options.runBoundMs);
  const { code, signal } = await ended;
  clearTimeout(runBound);
  for (const s of FORWARDED) process.off(s, onSignal);
  const leftovers = groupMembers(group);
  const leaked = groupAlive(group);
  killGroup(group, 'SIGKILL');
  if (interrupted.by !== undefined) return 130;
  if (leaked && leftovers.length > 0) {
    process.stderr.write(
      `\n== ${leftovers.length} process(es) started by the tests were still running after the run; killed:\n${leftovers.map((l) => `   ${l}`).join('\n')}\n`,
    );
    return 1;
  }
  if (signal !== null) {
    process.stderr.write(`\n== node --test ended by ${signal}\n`);
    return 1;
  }
  return code ?? 1;
}

process.exitCode = await main();
