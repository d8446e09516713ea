// The fault suite's shared harness: a sim fleet and a gateway as real processes on loopback, and
// one case start to finish (fault on → load → fault off → drain → figures). The load generator,
// leak checks and figures table live beside it and are re-exported here, so a test imports one file.

import assert from 'node:assert/strict';
import { httpJson } from '#test/fixtures/http.ts';
import { startGatewayProcess, startSimProcess, type GatewayProcess, type SimFleetProcess } from '#test/fixtures/processes.ts';
import { FigureTable } from './figures.ts';
import { drainFigures, type LeakFigures, type RuntimeView } from './leaks.ts';
import { pause, runLoad, type LoadOptions, type LoadTally } from './load.ts';
import { untilEvent } from '#test/fixtures/events.ts';

export * from './figures.ts';
export * from './leaks.ts';
export * from './load.ts';

/** Upstream limits short enough that hung nodes cost a test seconds, not minutes. */
export const FAST_UPSTREAM = {
  connect_timeout: '500ms',
  headers_timeout: '1500ms',
  body_idle_timeout: '1500ms',
  eject_after_failures: '3',
  eject_for: '2s',
} as const;

export interface BedOptions {
  /** Sim fleet TOML (`[[node]]` tables), or several: each runs as its own process. */
  readonly fleet: string | readonly string[];
  /** `[upstream]` keys; values are TOML literals for numbers, plain text for durations. */
  readonly upstream?: Readonly<Record<string, string>>;
  /** Extra `[server]` lines. */
  readonly server?: string;
  /** Extra TOML after the nodes (e.g. `[routing]`). */
  readonly extra?: string;
}

interface FleetSlot {
  readonly toml: string;
  sim: SimFleetProcess | undefined;
  readonly nodes: readonly { name: string; kind: string; url: string }[];
}

export class FaultBed {
  readonly gw: GatewayProcess;
  readonly #fleets: FleetSlot[];

  private constructor(fleets: FleetSlot[], gw: GatewayProcess) {
    this.#fleets = fleets;
    this.gw = gw;
  }

  static async start(options: BedOptions): Promise<FaultBed> {
    const tomls = typeof options.fleet === 'string' ? [options.fleet] : options.fleet;
    const started = await Promise.allSettled(tomls.map((toml) => startSimProcess(toml)));
    const fleets: FleetSlot[] = started.flatMap((s, i) =>
      s.status === 'fulfilled' ? [{ toml: tomls[i] ?? '', sim: s.value, nodes: s.value.nodes }] : [],
    );
    let gw: GatewayProcess | undefined;
    try {
      const failed = started.find((s) => s.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      gw = await startGatewayProcess(
        bedGatewayToml(
          fleets.flatMap((f) => f.nodes),
          options,
        ),
      );
      const bed = new FaultBed(fleets, gw);
      await bed.waitAllServing();
      return bed;
    } catch (error) {
      await gw?.stop();
      await Promise.all(fleets.map((f) => f.sim?.stop()));
      throw error;
    }
  }

  get url(): string {
    return this.gw.url;
  }

  /** Every sim node, across fleets. */
  get nodes(): readonly { name: string; kind: string; url: string }[] {
    return this.#fleets.flatMap((f) => f.nodes);
  }

  nodeUrl(name: string): string {
    const found = this.nodes.find((n) => n.name === name);
    if (found === undefined) throw new Error(`no sim node ${name}`);
    return found.url;
  }

  /** Whether the fleet holding this node is running. */
  isUp(name: string): boolean {
    return this.#fleets.some((f) => f.sim !== undefined && f.nodes.some((n) => n.name === name));
  }

  /** Stops a whole fleet process: its nodes refuse connections until `restartFleet`. */
  async stopFleet(index: number): Promise<void> {
    const slot = this.#fleets[index];
    assert.ok(slot?.sim !== undefined, `fleet ${index} is running`);
    const sim = slot.sim;
    slot.sim = undefined;
    await sim.stop();
  }

  /** Starts a stopped fleet again on the same ports, so the gateway's config still points at it. */
  async restartFleet(index: number): Promise<void> {
    const slot = this.#fleets[index];
    assert.ok(slot !== undefined && slot.sim === undefined, `fleet ${index} is stopped`);
    let toml = slot.toml;
    for (const node of slot.nodes) {
      toml = toml.replace(`name = "${node.name}"`, `name = "${node.name}"\nport = ${new URL(node.url).port}`);
    }
    // The ports were ours a moment ago; retry briefly in case the kernel has not released them.
    for (let attempt = 0; ; attempt++) {
      try {
        slot.sim = await startSimProcess(toml);
        return;
      } catch (error) {
        if (attempt >= 5) throw error;
        await pause(200);
      }
    }
  }

  async setFaults(node: string, faults: Readonly<Record<string, unknown>>): Promise<void> {
    const res = await httpJson('POST', `${this.nodeUrl(node)}/__sim/faults`, faults);
    assert.equal(res.status, 200, res.text);
  }

  async clearFaults(node: string): Promise<void> {
    await this.setFaults(node, { inference: 'none', models: 'none', health: 'none' });
  }

  async runtime(): Promise<RuntimeView> {
    return (await httpJson('GET', `${this.url}/admin/runtime`)).json<RuntimeView>();
  }

  async health(): Promise<HealthView> {
    return (await httpJson('GET', `${this.url}/health`)).json<HealthView>();
  }

  /** Every node healthy, not ejected, with a known model list: looked at again on each line the gateway logs (its transitions). */
  async waitAllServing(timeoutMs = 15_000): Promise<void> {
    await untilEvent(
      async () => {
        const health = await this.health();
        return health.details.every((d) => d.status === 'healthy' && d.ejected_until === null && d.models.names.length > 0);
      },
      [this.gw.process.output],
      'every node healthy with a known model list',
      { timeoutMs: Math.max(timeoutMs, 60_000) },
    );
  }

  async stop(): Promise<void> {
    await this.gw.stop();
    await Promise.all(this.#fleets.map((f) => f.sim?.stop()));
  }
}

/**
 * The gateway config for a bed: fast loops, but probe and listing timeouts loose enough that a
 * busy CI machine (two test files at once on two cores) does not fail healthy nodes.
 */
export function bedGatewayToml(
  nodes: readonly { name: string; kind: string; url: string }[],
  options: Omit<BedOptions, 'fleet'>,
): string {
  const upstream = { ...FAST_UPSTREAM, ...options.upstream };
  const lines = [
    '[server]',
    'listen = "127.0.0.1:0"',
    options.server ?? '',
    '[health]',
    'interval = "200ms"',
    'timeout = "2s"',
    'fail_threshold = 2',
    '[discovery]',
    'interval = "300ms"',
    'timeout = "1500ms"',
    '[upstream]',
    ...Object.entries(upstream).map(([key, value]) => (/^\d+$/.test(value) ? `${key} = ${value}` : `${key} = "${value}"`)),
  ];
  for (const n of nodes) {
    lines.push(
      '[[nodes]]',
      `name = "${n.name}"`,
      `url = "${n.url}"`,
      `kind = "${n.kind === 'llamacpp-router' ? 'llamacpp' : n.kind}"`,
    );
  }
  return `${lines.join('\n')}\n${options.extra ?? ''}\n`;
}

export interface HealthView {
  readonly status: string;
  readonly details: readonly {
    readonly name: string;
    readonly status: string;
    readonly ejected_until: string | null;
    readonly models: { readonly state: string; readonly names: readonly string[] };
  }[];
}

export interface CaseOptions {
  readonly bed: FaultBed;
  readonly table: FigureTable;
  readonly name: string;
  readonly load: Omit<LoadOptions, 'url'>;
  /** Switches the fault on (after the RSS baseline is read). */
  readonly arrange?: () => Promise<void>;
  /** Runs beside the load (e.g. flapping a node); receives a signal that aborts when the load ends. */
  readonly during?: (signal: AbortSignal) => Promise<void>;
  /** Switches the fault off before the drain. */
  readonly restore?: () => Promise<void>;
  readonly note?: string;
  /** The nodes the case uses (for the idle-socket figure); default every node. */
  readonly nodes?: readonly string[];
}

export interface CaseResult {
  readonly tally: LoadTally;
  readonly leaks: LeakFigures;
}

/** Fault on → load → fault off → drain → figures (recorded in the table, asserted by the caller). */
export async function runCase(options: CaseOptions): Promise<CaseResult> {
  const { bed } = options;
  const rssBefore = (await bed.runtime()).rss_bytes;
  await options.arrange?.();
  const loadDone = new AbortController();
  const during = options.during?.(loadDone.signal);
  let tallied: LoadTally;
  try {
    tallied = await runLoad({ ...options.load, url: bed.url });
  } finally {
    loadDone.abort();
    await during;
    await options.restore?.();
  }
  // assertNoLeaks allows two idle sockets per concurrent request: wait until no more are left.
  const leaks = await drainFigures(
    { url: bed.url, nodes: bed.nodes.filter((n) => bed.isUp(n.name)) },
    rssBefore,
    options.nodes,
    undefined,
    2 * options.load.concurrency,
  );
  options.table.add({ name: options.name, tally: tallied, leaks, ...(options.note === undefined ? {} : { note: options.note }) });
  return { tally: tallied, leaks };
}

/** One sim `[[node]]` table: quick answers and enough slots that the load rarely queues. */
export function simNode(
  name: string,
  kind: string,
  models: readonly string[],
  extra: Readonly<Record<string, string | number>> = {},
): string {
  const fields: Record<string, string | number> = { ttft: '5ms', tokens_per_second: 1000, slots: 16, ...extra };
  const lines = ['[[node]]', `name = "${name}"`, `kind = "${kind}"`, `models = [${models.map((m) => `"${m}"`).join(', ')}]`];
  for (const [key, value] of Object.entries(fields))
    lines.push(typeof value === 'number' ? `${key} = ${value}` : `${key} = "${value}"`);
  return lines.join('\n');
}
