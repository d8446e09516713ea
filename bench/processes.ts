// Child processes of the benchmark: the upstream, the gateway, nginx, the 1,000-node fleet. Each
// is started, read until it announces itself, drained (a full stdout pipe would stall it) and
// always stopped by its own pid.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO_ROOT = new URL('..', import.meta.url).pathname;
export const CLI = join(REPO_ROOT, 'bin/switchyard.js');

export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** The parsed JSON of the line it announced itself with. */
  readonly ready: Record<string, unknown>;
  /** The last lines of stderr, for error messages. */
  stderrTail(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly isReady: (line: string) => boolean;
  readonly env?: Record<string, string>;
  readonly timeoutMs?: number;
}

export async function startChild(options: StartOptions): Promise<Child> {
  const child = spawn(options.command, [...options.args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 40) stderr.shift();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const readyLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${options.command}: not ready in time\n${stderr.join('\n')}`)),
      options.timeoutMs ?? 30_000,
    );
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (!options.isReady(line)) return;
      clearTimeout(timer);
      resolve(line);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${options.command} exited before it was ready\n${stderr.join('\n')}`));
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.command}: no pid`);
  let ready: Record<string, unknown> = {};
  try {
    ready = JSON.parse(readyLine) as Record<string, unknown>;
  } catch {
    ready = { line: readyLine };
  }
  return {
    process: child,
    pid,
    ready,
    stderrTail: () => stderr.join('\n'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function startNodeScript(
  script: string,
  args: readonly string[] = [],
  nodeFlags: readonly string[] = [],
  timeoutMs?: number,
): Promise<Child> {
  return startChild({
    command: process.execPath,
    args: [...nodeFlags, join(REPO_ROOT, script), ...args],
    isReady: (line) => line.includes('"event":"'),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

export interface GatewayChild extends Child {
  readonly url: string;
}

/** The gateway in front of the benchmark upstream: one vLLM-kind node, control loops out of the way. */
export function proxyGatewayConfig(upstreamUrl: string, workers = 1): string {
  return [
    '[server]',
    'listen = "127.0.0.1:0"',
    `workers = ${workers}`,
    '[health]',
    'interval = "1h"',
    '[discovery]',
    'interval = "1h"',
    '[[nodes]]',
    'name = "upstream"',
    `url = "${upstreamUrl}"`,
    'kind = "vllm"',
    '',
  ].join('\n');
}

/** The V8 heap flags docs/performance.md chose ("Memory flags"); the launcher passes them (bin/switchyard.js never re-execs). */
const CHOSEN_HEAP_FLAGS = ['--max-semi-space-size=16', '--max-old-space-size=1024'];

/** `flags`, plus each chosen heap flag they do not name (V8 accepts `_` for `-`). */
export function withHeapFlags(flags: readonly string[]): string[] {
  const given = flags.join(' ').replaceAll('_', '-');
  return [...CHOSEN_HEAP_FLAGS.filter((flag) => !given.includes(flag.slice(0, flag.indexOf('=')))), ...flags];
}

/**
 * glibc's malloc settings docs/performance.md chose (issue 42, "malloc"); the launcher sets them
 * (examples/switchyard.service), as it passes the heap flags: glibc reads them only at start.
 */
export const CHOSEN_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** `switchyard serve` as its own process, with the given config text (and the chosen malloc settings, unless `env` names its own). */
export async function startGateway(
  configToml: string,
  options: { nodeFlags?: readonly string[]; env?: Record<string, string>; root?: string } = {},
): Promise<GatewayChild> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-'));
  const file = join(dir, 'switchyard.toml');
  await writeFile(file, configToml);
  const child = await startChild({
    command: process.execPath,
    args: [
      ...withHeapFlags(options.nodeFlags ?? []),
      options.root === undefined ? CLI : join(options.root, 'bin/switchyard.js'),
      'serve',
      '--config',
      file,
    ],
    isReady: (line) => line.includes('"gateway listening"'),
    env: { ...CHOSEN_MALLOC_ENV, ...options.env },
  });
  const url = child.ready.url;
  if (typeof url !== 'string') throw new Error('gateway announced no url');
  return {
    ...child,
    url,
    async stop() {
      await child.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A port free right now on 127.0.0.1 (for servers that cannot listen on port 0 and tell us). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
