// nginx as the reference proxy: one worker process (Switchyard is one process too), an upstream
// block with keep-alive connections, and no buffering of answers (a streaming proxy, like ours).
// Optional: without an nginx binary the benchmark runs without this target and says so.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childPids } from './proc-stats.ts';
import { freePort, sleepMs } from './processes.ts';

export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

export function commandVersion(command: string, args: readonly string[]): string {
  const out = spawnSync(command, [...args], { encoding: 'utf8' });
  return `${out.stdout ?? ''}${out.stderr ?? ''}`.trim().split('\n')[0] ?? '';
}

/** `--install-peers`: apt-get install the missing peers (root only); returns what it did. */
export function installPeers(): string {
  const missing = ['nginx', 'haproxy', 'wrk'].filter((c) => !hasCommand(c));
  if (missing.length === 0) return 'nginx, haproxy and wrk already installed';
  if (process.getuid?.() !== 0) return `not root: install ${missing.join(' ')} yourself`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  if (update.status !== 0) return 'apt-get update failed';
  const install = spawnSync('apt-get', ['install', '-y', '-qq', ...missing], { stdio: 'inherit', env });
  return install.status === 0 ? `installed ${missing.join(' ')}` : `apt-get install ${missing.join(' ')} failed`;
}

export function nginxConfig(dir: string, listenPort: number, upstreamPort: number, workers = 1): string {
  return `worker_processes ${workers};
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
${process.getuid?.() === 0 ? 'user root;' : ''}
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_body_buffer_size 64k;
  client_max_body_size 10m;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  upstream llm {
    server 127.0.0.1:${upstreamPort};
    keepalive 128;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
  }
  server {
    listen 127.0.0.1:${listenPort};
    location / {
      proxy_pass http://llm;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
}

export interface NginxChild {
  readonly url: string;
  /** Master and worker pids (the worker does the work; the master idles). */
  pids(): readonly number[];
  stop(): Promise<void>;
}

/** nginx in front of `upstreamUrl`, with `workers` worker processes (the `[server] workers` comparison uses 2). */
export async function startNginx(upstreamUrl: string, workers = 1): Promise<NginxChild> {
  const upstreamPort = Number(new URL(upstreamUrl).port);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-nginx-'));
  await mkdir(join(dir, 'logs'));
  const port = await freePort();
  await writeFile(join(dir, 'nginx.conf'), nginxConfig(dir, port, upstreamPort, workers));
  const child: ChildProcess = spawn('nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const master = child.pid;
  if (master === undefined) throw new Error('nginx: no pid');
  const deadline = performance.now() + 10_000;
  while (!(await canConnect(port)) || childPids(master).length === 0) {
    if (child.exitCode !== null || performance.now() > deadline) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`nginx did not start: ${stderr}`);
    }
    await sleepMs(50);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pids: () => [master, ...childPids(master)],
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
