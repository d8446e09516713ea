// What one plain request costs the process that proxies it (issue 39's footprint): which `src/`
// functions run, how many calls and promises, how many bytes are allocated. Used by the footprint
// test (test/unit/footprint.test.ts) and the footprint row of `npm run bench` (bench/footprint-report.ts).
//
// Each measurement is its own child process, `node [flags] bench/footprint.ts --child MODE ...`, that
// holds, in that process: the bench upstream (bench/upstream.ts: node:http, prebuilt answers, no
// `src/` code, no promise), the proxy under test — a gateway (one vLLM-kind node, no tenants, mesh,
// tracing or request log, unless the target adds one) or the bare proxy (bench/bare-proxy.ts) — and a
// client that sends the requests one after the other on one keep-alive socket with node:http callbacks
// (no promise either). The node's polls (health, discovery, load) run hourly. After the warm-up,
// windows of N requests follow back to back; each opens and closes in the `end` callback of an
// answer — the same phase of a request — so it holds exactly N requests' work (tails included).
// What runs in every window is the requests' work; what runs in some only (a timer, or work a
// request does now and then: a decode rate that moved, a route index rebuilt) is reported apart.
//
// - coverage (run with `--no-maglev --no-turbofan`: on Node 24 code optimised by Maglev or TurboFan
//   stops counting calls once takePreciseCoverage has reset the counts): V8 precise coverage with call
//   counts, function granularity, started before any `src/` module loads; the window's counts are the
//   second take (the first resets them). V8 counts every entry of a function: an async function's
//   call and each resumption after an await. Promises: an async_hooks init hook counts type PROMISE inside
//   the window; the client and the upstream create none (the bare proxy's row is the control), so
//   every one is the proxy's, divided by N. Each window makes one canary promise of its own and
//   takes it back out: the probe fails if the hook missed it, so 0 is a count, not a blind hook.
// - allocation (a normal process, no async hook: optimised code allocates what production code does):
//   the inspector's sampling heap profiler, sampling interval 128 bytes, keeping samples of objects
//   already collected (minor and major GC), so the profile is what was allocated in the window, not
//   what survived it. A sample is the proxy's own when its stack has a frame of the proxy's code
//   (`src/`, or bench/bare-proxy.ts for the bare proxy): the bytes allocated in calls from that code,
//   node:http and undici work it called included; the client's and upstream's allocations have no such
//   frame. Each own sample is also charged to its innermost own frame (the heaviest functions).

import { spawn, type ChildProcess } from 'node:child_process';
import { createHook } from 'node:async_hooks';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, Agent } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startBareProxy } from './bare-proxy.ts';
import { BENCH_MODEL, startUpstream } from './upstream.ts';

/**
 * The proxy measured: the plain gateway; with one limited tenant; with `[log] requests`; with `[tracing]`
 * exporting to a local OTLP sink at sample_ratio 1 (`tracing`) or 0 (`tracing-unsampled`); with `[mesh]`
 * (a site and one pinned peer site up in its own process, libp2p on loopback; the model served by the local node, so no
 * request is forwarded), or with the model only on the peer site (`mesh-forward`: every request forwarded,
 * the peer's work in its own process); or the bare proxy.
 */
export type FootprintTarget = 'gateway' | 'tenant' | 'log' | 'tracing' | 'tracing-unsampled' | 'mesh' | 'mesh-forward' | 'bare';
export type FootprintWorkload = 'json' | 'sse';
export const FOOTPRINT_TARGETS: readonly FootprintTarget[] = [
  'gateway',
  'tenant',
  'log',
  'tracing',
  'tracing-unsampled',
  'mesh',
  'mesh-forward',
  'bare',
];

/** The folders of the optional features a plain request must not run (issue 39's footprint test). */
export const FEATURE_FOLDERS: readonly string[] = [
  'src/tenants/',
  'src/mesh/',
  'src/cluster/',
  'src/tracing/',
  'src/proxy/sites/',
  'src/proxy/tenants/',
  // The Files and Batch API (issue 44): its routes are other paths; a plain request runs none of it.
  'src/batch/',
  // Translation is on by default: a plain request (to an endpoint no translation serves) runs none of it.
  'src/translate/',
  'src/proxy/translate/',
  // Resumable streams are always on: a request without X-Conversation-Id runs none of it.
  'src/proxy/streams/',
];

/** The flags coverage needs on Node 24 (see the header). */
export const COVERAGE_FLAGS: readonly string[] = ['--no-maglev', '--no-turbofan'];

export interface ProbeOptions {
  readonly target: FootprintTarget;
  readonly workload: FootprintWorkload;
  /** Requests in the measured window. */
  readonly requests: number;
  /** Requests before the first window opens. */
  readonly warmup: number;
  /** Windows of `requests` each, back to back (default 3): what runs in every one is the requests' work. */
  readonly windows?: number;
  /** The checkout whose `src/` is measured; default this one. */
  readonly root?: string;
  /** The child is killed past this; default 300 s (a busy machine). */
  readonly timeoutMs?: number;
}

/** One function of the proxy's own code that ran in the window. */
export interface RanFunction {
  /** Relative to the measured checkout: `src/proxy/inference/inference-handler.ts`. */
  readonly file: string;
  /** Its name, or `(anonymous)`. */
  readonly name: string;
  /** 1-based line of its start. */
  readonly line: number;
  /** Entries in one window (all its requests): calls, and an async function's resumptions after each await. */
  readonly calls: number;
}

export interface CoverageProbe {
  readonly target: FootprintTarget;
  readonly workload: FootprintWorkload;
  /** Requests per window. */
  readonly requests: number;
  readonly windows: number;
  /** The functions that ran in every window, with their fewest calls in one window: the per-request work. */
  readonly functions: readonly RanFunction[];
  /** The functions that ran in some windows only (timers, work a request does now and then), with their most calls in one window. */
  readonly occasional: readonly RanFunction[];
  /** The fewest promises created in one window. */
  readonly promises: number;
  readonly promisesByWindow: readonly number[];
}

export interface AllocatingFunction {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  /** Bytes charged to it in the window (all N requests). */
  readonly bytes: number;
}

export interface AllocationProbe {
  readonly target: FootprintTarget;
  readonly workload: FootprintWorkload;
  /** Requests per window. */
  readonly requests: number;
  readonly windows: number;
  readonly samplingInterval: number;
  /** Bytes allocated in calls from the proxy's own code in one window: the median window's. */
  readonly ownBytes: number;
  readonly ownBytesByWindow: readonly number[];
  /** Bytes the whole process allocated in the median window (client and upstream included). */
  readonly totalBytes: number;
  /** The median window's own bytes by innermost own frame, heaviest first. */
  readonly functions: readonly AllocatingFunction[];
}

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
const THIS_ROOT = resolve(BENCH_DIR, '..');
const SAMPLING_INTERVAL = 128;
const REQUEST_TIMEOUT_MS = 60_000;
const TENANT_KEY = 'sk-footprint-tenant';

/** `file:name` as the footprint test names a function (anonymous ones with their line). */
export function functionLabel(f: { readonly file: string; readonly name: string; readonly line: number }): string {
  return f.name === '(anonymous)' ? `${f.file}:(anonymous)@${f.line}` : `${f.file}:${f.name}`;
}

/** Runs the coverage probe in a child started with COVERAGE_FLAGS. */
export function probeCoverage(options: ProbeOptions): Promise<CoverageProbe> {
  return runChild<CoverageProbe>('coverage', COVERAGE_FLAGS, options);
}

/** Runs the allocation probe in a child with the runtime's own flags. */
export function probeAllocation(options: ProbeOptions): Promise<AllocationProbe> {
  return runChild<AllocationProbe>('allocation', [], options);
}

/** Spawns the child, reads its one result line; the child is killed on every path (timeout, error, this process exiting). */
function runChild<T>(mode: 'coverage' | 'allocation', flags: readonly string[], options: ProbeOptions): Promise<T> {
  const args = [
    ...flags,
    fileURLToPath(import.meta.url),
    '--child',
    mode,
    '--target',
    options.target,
    '--workload',
    options.workload,
    '--requests',
    String(options.requests),
    '--warmup',
    String(options.warmup),
    '--windows',
    String(options.windows ?? 3),
    '--root',
    resolve(options.root ?? THIS_ROOT),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const killAtExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killAtExit);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => void (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => void (stderr = (stderr + text).slice(-4000)));
  const timeoutMs = options.timeoutMs ?? 300_000;
  return new Promise<T>((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`footprint ${mode} probe (${options.target}): no result within ${timeoutMs / 1000} s\n${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', killAtExit);
      const line = stdout.split('\n').find((l) => l.startsWith('{"footprint":'));
      if (code !== 0 || line === undefined) {
        fail(new Error(`footprint ${mode} probe (${options.target}) exited with ${code ?? signal}\n${stderr}`));
        return;
      }
      done((JSON.parse(line) as { footprint: T }).footprint);
    });
  });
}

// ---- the child ---------------------------------------------------------------------------------

interface Proxy {
  readonly url: string;
  /** Does `path` (absolute) hold the proxy's own code? */
  readonly owns: (path: string) => boolean;
  readonly headers: Record<string, string>;
  close(): Promise<void>;
}

type MainModule = typeof import('../src/main.ts');
type ConfigModule = typeof import('../src/config/index.ts');
type TablesModule = typeof import('../src/config-tables.ts');
type LoggerModule = typeof import('../src/logs/logger.ts');

/** What a feature's config needs from the child: the OTLP sink's URL, the mesh's key file and peer. */
export interface FeatureSetting {
  readonly otlpUrl?: string;
  readonly mesh?: { readonly keyFile: string; readonly site: string; readonly peer: MeshPeer };
  /** The tracing row: OTLP exports the sink has read so far (the probe fails if the sampled row exported none). */
  readonly exports?: () => number;
}

export interface MeshPeer {
  readonly id: string;
  readonly publicKey: string;
  readonly multiaddr: string;
}

export function gatewayToml(target: FootprintTarget, upstreamUrl: string, logDir: string, feature: FeatureSetting = {}): string {
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    'workers = 1',
    '[health]',
    'interval = "1h"',
    '[discovery]',
    'interval = "1h"',
    '[load]',
    'interval = "1h"',
    '[[nodes]]',
    'name = "upstream"',
    `url = "${upstreamUrl}"`,
    'kind = "vllm"',
  ];
  if (target === 'tenant')
    lines.push('[[tenants]]', 'name = "app"', `keys = ["${TENANT_KEY}"]`, 'requests_per_minute = 100000000');
  if (target === 'log') lines.push('[log]', `requests = "${join(logDir, 'requests.log')}"`);
  if (target === 'tracing' || target === 'tracing-unsampled')
    lines.push('[tracing]', `otlp_endpoint = "${feature.otlpUrl ?? ''}"`, `sample_ratio = ${target === 'tracing' ? 1 : 0}`);
  // mesh-forward: the local node is healthy and listed, but its allow-list leaves the bench model out:
  // the model is the peer site's only, and every request is forwarded to it.
  if (target === 'mesh-forward') lines.push('models = ["not-the-bench-model"]');
  if ((target === 'mesh' || target === 'mesh-forward') && feature.mesh !== undefined) {
    const { keyFile, site, peer } = feature.mesh;
    lines.push(
      '[mesh]',
      `site = "${site}"`,
      // Where peers would send forwards: unused here (nothing is forwarded to this site).
      'url = "http://127.0.0.1:9"',
      `key_file = "${keyFile}"`,
      'listen = ["/ip4/127.0.0.1/tcp/0"]',
      `peers = ["${peer.multiaddr}"]`,
      '[[mesh.sites]]',
      `id = "${peer.id}"`,
      `public_key = "${peer.publicKey}"`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** An OTLP/HTTP sink on loopback: reads each export whole and answers 200 with callbacks (no `src/` code, no promise). */
function startOtlpSink(): Promise<{ url: string; exports: () => number; close: () => Promise<void> }> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      exports += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((ready) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      ready({
        url: `http://127.0.0.1:${port}/v1/traces`,
        exports: () => exports,
        close: () =>
          new Promise<void>((closed) => {
            server.closeAllConnections();
            server.close(() => closed());
          }),
      });
    }),
  );
}

/** An Ed25519 site key as `switchyard keygen` writes it (PKCS#8 PEM), its pinned public key and libp2p peer id. */
async function siteKey(): Promise<{ pem: string; publicKey: string; peerId: string }> {
  const { privateKeyFromRaw } = await import('@libp2p/crypto/keys');
  const { peerIdFromPrivateKey } = await import('@libp2p/peer-id');
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d ?? '', 'base64url');
  const pub = Buffer.from(jwk.x ?? '', 'base64url');
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKey: pub.toString('base64url'),
    peerId: peerIdFromPrivateKey(privateKeyFromRaw(Buffer.concat([seed, pub]))).toString(),
  };
}

/** A TCP port free on loopback just now (the peer's libp2p address must be known before it starts). */
function freePort(): Promise<number> {
  const server = createNetServer();
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

/**
 * The peer site as a grandchild: `--peer FILE` runs a gateway with that config and exits when its
 * stdin closes, so it ends with this child on every path (a SIGKILL of this child included); it is
 * also killed when this child exits and when it does not say it listens within 60 s.
 */
function startPeer(tomlFile: string, root: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--peer', tomlFile, '--root', root], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const killAtExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killAtExit);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => void (stderr = (stderr + text).slice(-4000)));
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`footprint peer site: not listening within 60 s\n${stderr}`));
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      if (!text.includes('peer listening')) return;
      clearTimeout(timer);
      ready(child);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', killAtExit);
      fail(new Error(`footprint peer site exited with ${code ?? signal}\n${stderr}`));
    });
  });
}

/** The peer site's process: a gateway from `root` with the config in `tomlFile`, until stdin closes. */
async function peerMain(tomlFile: string, root: string): Promise<void> {
  process.stdin
    .on('end', () => process.exit(0))
    .on('close', () => process.exit(0))
    .resume();
  const src = join(root, 'src');
  const load = (path: string): Promise<unknown> => import(pathToFileURL(join(src, path)).href);
  const { Gateway } = (await load('main.ts')) as MainModule;
  const { formatProblems } = (await load('config/index.ts')) as ConfigModule;
  const { loadConfig } = (await load('config-tables.ts')) as TablesModule;
  const { createLogger } = (await load('logs/logger.ts')) as LoggerModule;
  const loaded = loadConfig(readFileSync(tomlFile, 'utf8'), {});
  if (!loaded.ok) throw new Error(`footprint peer config: ${formatProblems(loaded.problems)}`);
  const logger = createLogger({ format: 'json', level: 'info', fd: openSync('/dev/null', 'w') });
  await Gateway.start({ config: loaded.config, logger });
  process.stdout.write('peer listening\n');
}

/** The mesh row: wait (bounded) until the gateway holds a fresh record of the peer site, so the windows run on a live mesh. */
async function peerFresh(proxyUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = await fetch(new URL('/metrics', proxyUrl), { signal: AbortSignal.timeout(5_000) })
      .then((res) => res.text())
      .catch(() => '');
    if (/^gateway_mesh_site_fresh\{site="there"\} 1$/m.test(text)) return;
    if (Date.now() > deadline) throw new Error('footprint mesh: the peer site was not fresh within 60 s');
    await new Promise((resume) => setTimeout(resume, 100));
  }
}

/** The sampled tracing row: the batch export (once a second) really ran, to the sink, within 10 s of the windows' end. */
async function exported(setting: FeatureSetting): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((setting.exports?.() ?? 0) === 0) {
    if (Date.now() > deadline) throw new Error('footprint tracing: the OTLP sink received no export');
    await new Promise((resume) => setTimeout(resume, 100));
  }
}

/** The features' settings for `target`: a sink started here for tracing, a key file and a pinned peer for the mesh. */
async function featureSetting(
  target: FootprintTarget,
  dir: string,
  root: string,
  upstreamUrl: string,
): Promise<{ setting: FeatureSetting; close: () => Promise<void> }> {
  if (target === 'tracing' || target === 'tracing-unsampled') {
    const sink = await startOtlpSink();
    return { setting: { otlpUrl: sink.url, exports: sink.exports }, close: () => sink.close() };
  }
  if (target === 'mesh' || target === 'mesh-forward') {
    const forward = target === 'mesh-forward';
    const own = await siteKey();
    const peer = await siteKey();
    const keyFile = join(dir, 'site.key');
    writeFileSync(keyFile, own.pem, { mode: 0o600 });
    const peerKeyFile = join(dir, 'peer.key');
    writeFileSync(peerKeyFile, peer.pem, { mode: 0o600 });
    const p2pPort = await freePort();
    const httpPort = forward ? await freePort() : 0;
    const peerToml = join(dir, 'peer.toml');
    // The peer site: its own process (its code is not the measured proxy's), pinning this site.
    writeFileSync(
      peerToml,
      [
        '[server]',
        `listen = "127.0.0.1:${httpPort}"`,
        'workers = 1',
        '[health]',
        'interval = "1h"',
        '[discovery]',
        'interval = "1h"',
        '[load]',
        'interval = "1h"',
        // mesh: one node where nothing listens, the peer serves no model (a request is never forwarded);
        // mesh-forward: the bench upstream, the peer serves the model (every request is forwarded to it).
        '[[nodes]]',
        'name = "peer-node"',
        `url = "${forward ? upstreamUrl : 'http://127.0.0.1:9'}"`,
        'kind = "vllm"',
        '[mesh]',
        'site = "there"',
        `url = "http://127.0.0.1:${forward ? httpPort : 9}"`,
        `key_file = "${peerKeyFile}"`,
        `listen = ["/ip4/127.0.0.1/tcp/${p2pPort}"]`,
        '[[mesh.sites]]',
        'id = "here"',
        `public_key = "${own.publicKey}"`,
        '',
      ].join('\n'),
    );
    const peerProcess = await startPeer(peerToml, root);
    const multiaddr = `/ip4/127.0.0.1/tcp/${p2pPort}/p2p/${peer.peerId}`;
    return {
      setting: { mesh: { keyFile, site: 'here', peer: { id: 'there', publicKey: peer.publicKey, multiaddr } } },
      close: async () => void peerProcess.kill('SIGKILL'),
    };
  }
  return { setting: {}, close: async () => {} };
}

async function startProxy(
  target: FootprintTarget,
  root: string,
  upstreamUrl: string,
  logDir: string,
  feature: FeatureSetting,
): Promise<Proxy> {
  if (target === 'bare') {
    const bare = await startBareProxy(upstreamUrl);
    const own = join(BENCH_DIR, 'bare-proxy.ts');
    return { url: bare.url, owns: (path) => path === own, headers: {}, close: () => bare.close() };
  }
  const src = join(root, 'src');
  const load = (path: string): Promise<unknown> => import(pathToFileURL(join(src, path)).href);
  const { Gateway } = (await load('main.ts')) as MainModule;
  const { formatProblems } = (await load('config/index.ts')) as ConfigModule;
  // The loader bound to the features' config tables (a tree before them loads its config from config/ alone).
  const { loadConfig } = (await load('config-tables.ts').catch(() => load('config/index.ts'))) as TablesModule;
  const { createLogger } = (await load('logs/logger.ts')) as LoggerModule;
  const loaded = loadConfig(gatewayToml(target, upstreamUrl, logDir, feature), {});
  if (!loaded.ok) throw new Error(`footprint config: ${formatProblems(loaded.problems)}`);
  // The logger serve builds (JSON, level info), writing to /dev/null.
  const logger = createLogger({ format: 'json', level: 'info', fd: openSync('/dev/null', 'w') });
  const gateway = await Gateway.start({ config: loaded.config, logger });
  return {
    url: gateway.url,
    owns: (path) => path.startsWith(`${src}/`),
    headers: target === 'tenant' ? { authorization: `Bearer ${TENANT_KEY}` } : {},
    close: () => gateway.close(),
  };
}

function requestBody(workload: FootprintWorkload): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: BENCH_MODEL,
      messages: [{ role: 'user', content: 'Say something short.' }],
      max_tokens: workload === 'sse' ? 20 : 200,
      ...(workload === 'sse' ? { stream: true } : {}),
    }),
  );
}

interface Sequence {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  readonly workload: FootprintWorkload;
  readonly count: number;
  /** Called in the `end` callback of answer `index` (0-based), before the next request is sent. */
  readonly onAnswered: (index: number) => void;
}

/** Sends `count` requests one after the other with callbacks only; each answer must be a whole 200. */
function sendSequence(s: Sequence): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL('/v1/chat/completions', s.url);
  const headers = { ...s.headers, 'content-type': 'application/json', 'content-length': String(s.body.length) };
  return new Promise<void>((done, fail) => {
    const finish = (error?: Error): void => {
      agent.destroy();
      if (error === undefined) done();
      else fail(error);
    };
    const send = (index: number): void => {
      const req = httpRequest(target, { method: 'POST', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => void (text += chunk));
        res.on('end', () => {
          const whole = s.workload === 'sse' ? text.endsWith('data: [DONE]\n\n') : text.startsWith('{') && text.endsWith('}');
          if (res.statusCode !== 200 || !whole) {
            finish(new Error(`request ${index}: ${res.statusCode} ${text.slice(0, 300)}`));
            return;
          }
          s.onAnswered(index);
          if (index + 1 < s.count) send(index + 1);
          else finish();
        });
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`request ${index}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', finish);
      req.end(s.body);
    };
    send(0);
  });
}

/** The first request may wait for the node's first poll: a few tries, bounded. */
async function firstAnswer(proxy: Proxy, workload: FootprintWorkload): Promise<void> {
  const body = requestBody(workload);
  for (let attempt = 1; ; attempt += 1) {
    try {
      await sendSequence({ url: proxy.url, headers: proxy.headers, body, workload, count: 1, onAnswered: () => {} });
      return;
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resume) => setTimeout(resume, 100));
    }
  }
}

/** 1-based line of `offset` in `path` (type stripping keeps positions: the file's text is V8's). */
function lineAt(lines: Map<string, number[]>, path: string, offset: number): number {
  let starts = lines.get(path);
  if (starts === undefined) {
    starts = [0];
    const text = readFileSync(path, 'utf8');
    for (let i = 0; i < text.length; i += 1) if (text.charCodeAt(i) === 10) starts.push(i + 1);
    lines.set(path, starts);
  }
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** Posts to this thread's own session, whose answer comes back before post returns (the windows rely on it). */
function postNow<T>(session: Session, method: string, params: object = {}): T {
  let answer: { error: Error | null; result: unknown } | undefined;
  session.post(method, params, (error, result) => void (answer = { error, result }));
  if (answer === undefined) throw new Error(`${method}: the inspector answered later, not in the call`);
  if (answer.error !== null) throw answer.error;
  return answer.result as T;
}

export interface ScriptCoverage {
  readonly url: string;
  readonly functions: readonly { functionName: string; ranges: readonly { startOffset: number; count: number }[] }[];
}

export interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

function pathOf(url: string): string | undefined {
  return url.startsWith('file://') ? fileURLToPath(url) : undefined;
}

/** Where the windows open and close: `at(index)` in the `end` callback of answer `index`. */
function windowBoundaries(
  warmup: number,
  requests: number,
  windows: number,
  at: (boundary: number) => void,
): (index: number) => void {
  return (index) => {
    const past = index - (warmup - 1);
    if (past >= 0 && past % requests === 0 && past / requests <= windows) at(past / requests);
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

async function childMain(argv: readonly string[]): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      child: { type: 'string' },
      target: { type: 'string' },
      workload: { type: 'string' },
      requests: { type: 'string' },
      warmup: { type: 'string' },
      windows: { type: 'string' },
      root: { type: 'string' },
    },
  });
  const mode = values.child;
  const target = values.target as FootprintTarget;
  const workload = values.workload as FootprintWorkload;
  const requests = Number(values.requests);
  const warmup = Math.max(1, Number(values.warmup));
  const windows = Math.max(1, Number(values.windows));
  const root = resolve(values.root ?? THIS_ROOT);
  const session = new Session();
  session.connect();
  // Coverage starts before any `src/` module is loaded, so every function has its counters.
  if (mode === 'coverage') {
    postNow(session, 'Profiler.enable');
    postNow(session, 'Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  }
  const logDir = mkdtempSync(join(tmpdir(), 'switchyard-footprint-'));
  const upstream = await startUpstream({ usageNulls: true });
  const feature = await featureSetting(target, logDir, root, upstream.url);
  const proxy = await startProxy(target, root, upstream.url, logDir, feature.setting);
  try {
    if (target === 'mesh' || target === 'mesh-forward') await peerFresh(proxy.url);
    await firstAnswer(proxy, workload);
    const base = {
      url: proxy.url,
      headers: proxy.headers,
      body: requestBody(workload),
      workload,
      count: warmup + requests * windows,
    };
    const lines = new Map<string, number[]>();
    const context: ProbeContext = {
      target,
      workload,
      requests,
      windows,
      owns: proxy.owns,
      relativeTo: target === 'bare' ? THIS_ROOT : root,
      lineAt: (path, offset) => lineAt(lines, path, offset),
    };
    let result: CoverageProbe | AllocationProbe;
    if (mode === 'coverage') {
      const promises: number[] = [];
      const takes: (readonly ScriptCoverage[])[] = [];
      let open = -1;
      const hook = createHook({
        init(_id, type) {
          if (open >= 0 && type === 'PROMISE') promises[open] = (promises[open] ?? 0) + 1;
        },
      }).enable();
      const onAnswered = windowBoundaries(warmup, requests, windows, (boundary) => {
        // Each take answers the counts since the last one and resets them: boundary 0 only resets.
        const taken = postNow<{ result: readonly ScriptCoverage[] }>(session, 'Profiler.takePreciseCoverage');
        if (boundary > 0) takes.push(taken.result);
        open = boundary < windows ? boundary : -1;
        if (open >= 0) {
          // The canary: one promise of the probe's own per window, taken back out, so a window that
          // reads 0 (a gateway that makes none) is a count, not a hook that saw nothing (checked below).
          promises[open] = -1;
          void Promise.resolve();
        }
      });
      await sendSequence({ ...base, onAnswered });
      hook.disable();
      if (takes.length !== windows) throw new Error(`${takes.length} of ${windows} windows closed`);
      if (promises.some((n) => n < 0)) throw new Error(`the promise hook did not see the canary promise: ${promises.join(', ')}`);
      result = coverageOf(takes, promises, context);
    } else {
      postNow(session, 'HeapProfiler.enable');
      const profiles: HeapNode[] = [];
      const onAnswered = windowBoundaries(warmup, requests, windows, (boundary) => {
        if (boundary > 0) {
          profiles.push(postNow<{ profile: { head: HeapNode } }>(session, 'HeapProfiler.getSamplingProfile').profile.head);
          postNow(session, 'HeapProfiler.stopSampling');
        }
        if (boundary < windows)
          postNow(session, 'HeapProfiler.startSampling', {
            samplingInterval: SAMPLING_INTERVAL,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
      });
      await sendSequence({ ...base, onAnswered });
      if (profiles.length !== windows) throw new Error(`${profiles.length} of ${windows} windows closed`);
      result = allocationOf(profiles, context);
    }
    if (target === 'tracing') await exported(feature.setting);
    process.stdout.write(`${JSON.stringify({ footprint: result })}\n`);
  } finally {
    await Promise.race([
      Promise.all([proxy.close(), upstream.close(), feature.close()]),
      new Promise((resume) => setTimeout(resume, 5_000).unref()),
    ]);
    rmSync(logDir, { recursive: true, force: true });
  }
}

export interface ProbeContext {
  readonly target: FootprintTarget;
  readonly workload: FootprintWorkload;
  readonly requests: number;
  readonly windows: number;
  readonly owns: (path: string) => boolean;
  readonly relativeTo: string;
  /** 1-based line of a character offset in a file. */
  readonly lineAt: (path: string, offset: number) => number;
}

/** Per window, the own functions that ran; then those in every window (fewest calls) and the rest (most calls). */
export function coverageOf(
  takes: readonly (readonly ScriptCoverage[])[],
  promises: readonly number[],
  c: ProbeContext,
): CoverageProbe {
  const seen = new Map<string, { fn: RanFunction; counts: number[] }>();
  takes.forEach((take, window) => {
    for (const script of take) {
      const path = pathOf(script.url);
      if (path === undefined || !c.owns(path)) continue;
      for (const fn of script.functions) {
        const range = fn.ranges[0];
        if (range === undefined || range.count === 0) continue;
        const ran = {
          file: relative(c.relativeTo, path),
          name: fn.functionName || '(anonymous)',
          line: c.lineAt(path, range.startOffset),
          calls: 0,
        };
        const key = `${ran.file}:${range.startOffset}`;
        const entry = seen.get(key) ?? { fn: ran, counts: new Array<number>(takes.length).fill(0) };
        entry.counts[window] = (entry.counts[window] ?? 0) + range.count;
        seen.set(key, entry);
      }
    }
  });
  const functions: RanFunction[] = [];
  const occasional: RanFunction[] = [];
  for (const { fn, counts } of seen.values()) {
    const fewest = Math.min(...counts);
    if (fewest > 0) functions.push({ ...fn, calls: fewest });
    else occasional.push({ ...fn, calls: Math.max(...counts) });
  }
  const order = (a: RanFunction, b: RanFunction): number => a.file.localeCompare(b.file) || a.line - b.line;
  return {
    target: c.target,
    workload: c.workload,
    requests: c.requests,
    windows: c.windows,
    functions: functions.sort(order),
    occasional: occasional.sort(order),
    promises: Math.min(...promises),
    promisesByWindow: promises,
  };
}

/** One window's profile: own bytes are those under an own frame, charged to the innermost one. */
function windowAllocation(head: HeapNode, c: ProbeContext): { own: number; total: number; functions: AllocatingFunction[] } {
  const byFunction = new Map<string, AllocatingFunction>();
  let own = 0;
  let total = 0;
  const walk = (node: HeapNode, innermost: AllocatingFunction | undefined): void => {
    const path = pathOf(node.callFrame.url);
    let charged = innermost;
    if (path !== undefined && c.owns(path)) {
      const name = node.callFrame.functionName || '(anonymous)';
      charged = { file: relative(c.relativeTo, path), name, line: node.callFrame.lineNumber + 1, bytes: 0 };
    }
    total += node.selfSize;
    if (charged !== undefined && node.selfSize > 0) {
      own += node.selfSize;
      const key = `${charged.file}:${charged.name}:${charged.line}`;
      byFunction.set(key, { ...charged, bytes: (byFunction.get(key)?.bytes ?? 0) + node.selfSize });
    }
    for (const child of node.children) walk(child, charged);
  };
  walk(head, undefined);
  return { own, total, functions: [...byFunction.values()].sort((a, b) => b.bytes - a.bytes) };
}

/** The median window by own bytes (a timer's allocations in one window do not move it). */
export function allocationOf(heads: readonly HeapNode[], c: ProbeContext): AllocationProbe {
  const perWindow = heads.map((head) => windowAllocation(head, c));
  const middle = median(perWindow.map((w) => w.own));
  const chosen = perWindow.find((w) => w.own === middle) ?? { own: 0, total: 0, functions: [] };
  return {
    target: c.target,
    workload: c.workload,
    requests: c.requests,
    windows: c.windows,
    samplingInterval: SAMPLING_INTERVAL,
    ownBytes: chosen.own,
    ownBytesByWindow: perWindow.map((w) => w.own),
    totalBytes: chosen.total,
    functions: chosen.functions,
  };
}

if (import.meta.main) {
  try {
    const peerAt = process.argv.indexOf('--peer');
    if (peerAt >= 0) {
      await peerMain(process.argv[peerAt + 1] ?? '', process.argv[process.argv.indexOf('--root') + 1] ?? THIS_ROOT);
      await new Promise(() => {}); // until stdin closes
    }
    await childMain(process.argv.slice(2));
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  }
}
