// HAProxy as a second reference proxy (issue 42's side-by-side rows): one thread (Switchyard and
// nginx's rows are one process too), HTTP mode, keep-alive on both sides with idle server
// connections reused by any client (`http-reuse always`), answers streamed as they come.
// Optional: without a haproxy binary the side-by-side rows run without it and say so.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, type NginxChild } from './nginx.ts';
import { freePort, sleepMs } from './processes.ts';

export function haproxyConfig(listenPort: number, upstreamPort: number): string {
  return `global
  nbthread 1
  maxconn 8192
defaults
  mode http
  option http-keep-alive
  http-reuse always
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  timeout http-keep-alive 120s
frontend bench
  bind 127.0.0.1:${listenPort}
  default_backend llm
backend llm
  server upstream 127.0.0.1:${upstreamPort} maxconn 1024
`;
}

/** HAProxy in front of `upstreamUrl`, in the foreground (`-db`), one process. */
export async function startHaproxy(upstreamUrl: string): Promise<NginxChild> {
  const upstreamPort = Number(new URL(upstreamUrl).port);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-haproxy-'));
  const port = await freePort();
  const config = join(dir, 'haproxy.cfg');
  await writeFile(config, haproxyConfig(port, upstreamPort));
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error('haproxy: no pid');
  const deadline = performance.now() + 10_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || performance.now() > deadline) {
      child.kill('SIGKILL');
      await rm(dir, { recursive: true, force: true });
      throw new Error(`haproxy did not start: ${stderr}`);
    }
    await sleepMs(50);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pids: () => [pid],
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
