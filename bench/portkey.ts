// The Portkey gateway (npm `@portkey-ai/gateway`, Node.js like Switchyard) as the side-by-side rows'
// Node peer (issue 42). It is never a dependency of Switchyard: `--install-peers` installs one pinned
// version into a scratch folder of its own under the system's temporary directory, and the bench
// runs it from there (`start-server.js --headless`); without it the rows say so. Each request names
// its upstream in Portkey's headers: the OpenAI provider at a custom host (the bench upstream).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect } from './nginx.ts';
import { freePort, sleepMs } from './processes.ts';

export const PORTKEY_PACKAGE = '@portkey-ai/gateway';
export const PORTKEY_VERSION = '1.15.2';
/** The scratch folder Portkey is installed in (outside the repository: never a dependency). */
export const PORTKEY_DIR = join(tmpdir(), 'switchyard-bench-peers', 'portkey');
const ENTRY = join(PORTKEY_DIR, 'node_modules', PORTKEY_PACKAGE, 'build', 'start-server.js');

/** Whether the pinned Portkey is installed in its scratch folder. */
export function hasPortkey(): boolean {
  return existsSync(ENTRY);
}

/** `--install-peers`: npm-installs the pinned Portkey into its scratch folder; returns what it did. */
export function installPortkey(): string {
  if (hasPortkey()) return `${PORTKEY_PACKAGE}@${PORTKEY_VERSION} already in ${PORTKEY_DIR}`;
  mkdirSync(PORTKEY_DIR, { recursive: true });
  writeFileSync(join(PORTKEY_DIR, 'package.json'), '{"name":"switchyard-bench-peer-portkey","private":true}\n');
  const install = spawnSync('npm', ['install', '--no-audit', '--no-fund', `${PORTKEY_PACKAGE}@${PORTKEY_VERSION}`], {
    cwd: PORTKEY_DIR,
    stdio: 'inherit',
  });
  return install.status === 0
    ? `installed ${PORTKEY_PACKAGE}@${PORTKEY_VERSION} in ${PORTKEY_DIR}`
    : `npm install ${PORTKEY_PACKAGE} failed`;
}

export interface PortkeyChild {
  readonly url: string;
  /** What every request through Portkey carries: the provider and the upstream it is sent to. */
  readonly headers: Readonly<Record<string, string>>;
  pids(): readonly number[];
  stop(): Promise<void>;
}

/** Portkey in front of `upstreamUrl` (its OpenAI provider pointed at the bench upstream). */
export async function startPortkey(upstreamUrl: string): Promise<PortkeyChild> {
  if (!hasPortkey()) throw new Error(`${PORTKEY_PACKAGE} is not installed (npm run bench -- --install-peers)`);
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [ENTRY, `--port=${port}`, '--headless'], {
    cwd: PORTKEY_DIR,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error('portkey: no pid');
  const deadline = performance.now() + 30_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`portkey did not start: ${stderr}`);
    }
    await sleepMs(100);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    headers: {
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstreamUrl}/v1`,
      authorization: 'Bearer bench',
    },
    pids: () => [pid],
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
