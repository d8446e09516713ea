// A federation of real `switchyard serve` processes on 127.0.0.1, for federation.test.ts and
// `npm run bench -- --mesh`: one `switchyard sim` process holds every site's simulated nodes
// (each site's gateway sees only its own), each site gets an Ed25519 key file, fixed ports chosen
// up front (its [mesh] url and libp2p address must be known before it starts), and a config with
// [mesh] and [[mesh.sites]] pins for every site.

import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { startCli, startSimProcess, type RunningProcess, type SimFleetProcess } from '#test/fixtures/processes.ts';

export interface SimModel {
  readonly id: string;
  readonly context: number;
}

export interface SiteSpec {
  readonly id: string;
  /** Sim nodes of this site (vLLM kind, one model list and context each). */
  readonly nodes: readonly { readonly name: string; readonly models: readonly string[]; readonly context: number }[];
  /** Node names in the sim but left out of the site's config at first (added later by `setNodes`). */
  readonly dormant?: readonly string[];
}

export interface SiteKeyMaterial {
  readonly privateKey: KeyObject;
  /** base64url raw 32 bytes: what [[mesh.sites]] public_key pins. */
  readonly publicKey: string;
  readonly peerId: string;
  readonly pem: string;
}

export function siteKeyMaterial(): SiteKeyMaterial {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const seed = Buffer.from(jwk.d ?? '', 'base64url');
  const pub = Buffer.from(jwk.x ?? '', 'base64url');
  const peerId = peerIdFromPrivateKey(privateKeyFromRaw(Buffer.concat([seed, pub]))).toString();
  return {
    privateKey,
    publicKey: pub.toString('base64url'),
    peerId,
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * A free TCP port on 127.0.0.1 below the kernel's ephemeral range (32768+ on Linux): a site's
 * ports are fixed in every config before it starts, possibly minutes later on a busy machine, and
 * a port from the ephemeral range could meanwhile be taken by any process connecting or listening
 * on port 0. `taken` holds the ports already handed out for this fleet.
 */
export async function freePort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 200; tries += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const server = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!ok) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    taken.add(port);
    return port;
  }
  throw new Error('no free port found in 20000-31999');
}

export interface MeshTimings {
  readonly heartbeat: string;
  readonly freshness: string;
  readonly maxModelsPerSite: number;
  /** Health/discovery loop interval of every gateway. */
  readonly loop: string;
  /** Their timeout (default 5 s; the shared sim process answers slowly when the machine is busy). */
  readonly loopTimeout?: string;
  /** How long one gateway may take to start (default 90 s: a busy 2-core machine is slow). */
  readonly startTimeoutMs?: number;
}

/** How long one HTTP read of a site may take: a gateway on a busy 2-core machine (two suites at once) was seen to take over 10 s. */
export const READ_TIMEOUT_MS = 60_000;

/**
 * test/mesh's timings: a 300 ms heartbeat, and a freshness window of ten of them, so that a site
 * turns stale only when it stops (or is stopped), not because a busy machine delayed three
 * heartbeats in a row.
 */
export const FAST: MeshTimings = { heartbeat: '300ms', freshness: '3000ms', maxModelsPerSite: 8, loop: '200ms' };

export class MeshSite {
  readonly id: string;
  readonly key: SiteKeyMaterial;
  readonly httpPort: number;
  readonly p2pPort: number;
  readonly dir: string;
  process: RunningProcess | undefined;
  /** performance.now() when its last start spawned the process, and when it then said it listens. */
  startedAt: number | undefined;
  readyAt: number | undefined;
  readonly startTimeoutMs: number;
  #config: (nodeNames: readonly string[]) => string;
  #nodes: readonly string[];

  constructor(init: {
    id: string;
    key: SiteKeyMaterial;
    httpPort: number;
    p2pPort: number;
    dir: string;
    nodes: readonly string[];
    config: (nodeNames: readonly string[]) => string;
    startTimeoutMs: number;
  }) {
    this.startTimeoutMs = init.startTimeoutMs;
    this.id = init.id;
    this.key = init.key;
    this.httpPort = init.httpPort;
    this.p2pPort = init.p2pPort;
    this.dir = init.dir;
    this.#nodes = init.nodes;
    this.#config = init.config;
  }

  get url(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  get p2pAddr(): string {
    return `/ip4/127.0.0.1/tcp/${this.p2pPort}/p2p/${this.key.peerId}`;
  }

  get configPath(): string {
    return join(this.dir, `${this.id}.toml`);
  }

  async start(): Promise<void> {
    await writeFile(this.configPath, this.#config(this.#nodes));
    this.startedAt = performance.now();
    this.readyAt = undefined;
    const proc = startCli(['serve', '--config', this.configPath], { SWITCHYARD_LOG_LEVEL: 'info' });
    this.process = proc;
    await proc.waitForLine((l) => l.includes('"gateway listening"'), this.startTimeoutMs);
    this.readyAt = performance.now();
  }

  /** Rewrites the config with these sim nodes and reloads it (SIGHUP). */
  async setNodes(nodes: readonly string[]): Promise<void> {
    this.#nodes = nodes;
    await writeFile(this.configPath, this.#config(nodes));
    const before = this.process?.lines.length ?? 0;
    this.process?.child.kill('SIGHUP');
    await this.process?.waitForLine(
      (l) => l.includes('"config reloaded"') && (this.process?.lines.indexOf(l) ?? 0) >= before,
      120_000,
    );
  }

  signal(signal: NodeJS.Signals): void {
    this.process?.child.kill(signal);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.process?.stop(signal);
  }

  async json<T>(path: string, init?: RequestInit): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: body as T };
  }

  /** /metrics as text. */
  async metrics(): Promise<string> {
    const res = await fetch(`${this.url}/metrics`, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    return res.text();
  }

  /** Parsed JSON log lines so far. */
  logs(): Record<string, unknown>[] {
    return (this.process?.lines ?? []).flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }
}

export interface MeshFleet {
  readonly sim: SimFleetProcess;
  readonly sites: ReadonlyMap<string, MeshSite>;
  site(id: string): MeshSite;
  /** Extra pinned sites whose keys the test holds (to publish as them, or forge). */
  readonly extraKeys: ReadonlyMap<string, SiteKeyMaterial>;
  stop(): Promise<void>;
}

export interface MeshFleetOptions {
  readonly sites: readonly SiteSpec[];
  /** Sites pinned everywhere but run by the test itself (e.g. a peer in the test process). */
  readonly extraPins?: readonly string[];
  readonly timings?: MeshTimings;
  /** Which sites each site dials (indexes); default: every other site. */
  readonly peersOf?: (index: number, count: number) => readonly number[];
  /** Extra libp2p peers every site dials (e.g. the test's own peer). */
  readonly extraPeers?: readonly string[];
  /** Start the sites this many at a time (memory and CPU on small machines). */
  readonly startConcurrency?: number;
}

function simToml(sites: readonly SiteSpec[]): string {
  return sites
    .flatMap((s) => s.nodes)
    .map((n) =>
      [
        '[[node]]',
        `name = "${n.name}"`,
        'kind = "vllm"',
        `models = [${n.models.map((m) => `"${m}"`).join(', ')}]`,
        `context = ${n.context}`,
        'slots = 4',
        'ttft = "5ms"',
        'tokens_per_second = 2000',
        '',
      ].join('\n'),
    )
    .join('\n');
}

export async function startMeshFleet(options: MeshFleetOptions): Promise<MeshFleet> {
  const timings = options.timings ?? FAST;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-mesh-'));
  let sim: SimFleetProcess | undefined;
  try {
    sim = await startSimProcess(simToml(options.sites));
    return await startSites(options, timings, dir, sim);
  } catch (error) {
    // startSites stops the gateways it started; the sim and the directory are this function's.
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function startSites(
  options: MeshFleetOptions,
  timings: MeshTimings,
  dir: string,
  sim: SimFleetProcess,
): Promise<MeshFleet> {
  const keys = new Map(options.sites.map((s) => [s.id, siteKeyMaterial()] as const));
  const extraKeys = new Map((options.extraPins ?? []).map((id) => [id, siteKeyMaterial()] as const));
  const taken = new Set<number>();
  const ports: { http: number; p2p: number }[] = [];
  for (const _ of options.sites) ports.push({ http: await freePort(taken), p2p: await freePort(taken) });
  const pins = [...keys, ...extraKeys]
    .map(([id, k]) => ['[[mesh.sites]]', `id = "${id}"`, `public_key = "${k.publicKey}"`].join('\n'))
    .join('\n');
  const sites = new Map<string, MeshSite>();
  const count = options.sites.length;
  const peersOf = options.peersOf ?? ((i: number, n: number) => [...Array(n).keys()].filter((j) => j !== i));
  options.sites.forEach((spec, i) => {
    const key = keys.get(spec.id)!;
    const keyFile = join(dir, `${spec.id}.key`);
    const peerAddrs = [
      ...peersOf(i, count).map((j) => `/ip4/127.0.0.1/tcp/${ports[j]!.p2p}/p2p/${keys.get(options.sites[j]!.id)!.peerId}`),
      ...(options.extraPeers ?? []),
    ];
    const config = (nodeNames: readonly string[]): string =>
      [
        '[server]',
        `listen = "127.0.0.1:${ports[i]!.http}"`,
        '[health]',
        `interval = "${timings.loop}"`,
        `timeout = "${timings.loopTimeout ?? '5s'}"`,
        'fail_threshold = 2',
        '[discovery]',
        `interval = "${timings.loop}"`,
        `timeout = "${timings.loopTimeout ?? '5s'}"`,
        '[routing]',
        'tokenize_timeout = "10s"',
        'queue_timeout = "1s"',
        ...nodeNames.flatMap((name) => ['[[nodes]]', `name = "${name}"`, `url = "${sim.url(name)}"`, 'kind = "vllm"']),
        '[mesh]',
        `site = "${spec.id}"`,
        `url = "http://127.0.0.1:${ports[i]!.http}"`,
        `key_file = "${keyFile}"`,
        `listen = ["/ip4/127.0.0.1/tcp/${ports[i]!.p2p}"]`,
        `peers = [${peerAddrs.map((a) => `"${a}"`).join(', ')}]`,
        `heartbeat = "${timings.heartbeat}"`,
        `freshness = "${timings.freshness}"`,
        `max_models_per_site = ${timings.maxModelsPerSite}`,
        pins,
        '',
      ].join('\n');
    const active = spec.nodes.map((n) => n.name).filter((n) => !(spec.dormant ?? []).includes(n));
    sites.set(
      spec.id,
      new MeshSite({
        id: spec.id,
        key,
        httpPort: ports[i]!.http,
        p2pPort: ports[i]!.p2p,
        dir,
        nodes: active,
        config,
        startTimeoutMs: timings.startTimeoutMs ?? 90_000,
      }),
    );
  });
  await Promise.all([...keys].map(([id, k]) => writeFile(join(dir, `${id}.key`), k.pem, { mode: 0o600 })));
  const fleet: MeshFleet = {
    sim,
    sites,
    extraKeys,
    site(id) {
      const found = sites.get(id);
      if (found === undefined) throw new Error(`no site ${id}`);
      return found;
    },
    async stop() {
      const keep = process.env.MESH_LOG_DIR;
      if (keep !== undefined) {
        await Promise.all(
          [...sites.values()].map((s) =>
            writeFile(join(keep, `${s.id}.log`), [...(s.process?.lines ?? []), ...(s.process?.stderr ?? [])].join('\n')),
          ),
        );
      }
      await Promise.all([...sites.values()].map((s) => s.stop('SIGKILL').catch(() => undefined)));
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    const all = [...sites.values()];
    const step = options.startConcurrency ?? all.length;
    for (let i = 0; i < all.length; i += step) await Promise.all(all.slice(i, i + step).map((s) => s.start()));
  } catch (error) {
    await fleet.stop();
    throw error;
  }
  return fleet;
}
