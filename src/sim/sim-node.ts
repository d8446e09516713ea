// One simulated backend on loopback: a kind's handler behind the recording, fault-switching HTTP
// shell. This is what tests and the fleet start.

import { systemClock, type Clock } from '#src/core/clock.ts';
import type { ControlTarget } from '#src/sim/control-api.ts';
import { mergeFaults, NO_FAULTS, type SimFaults } from '#src/sim/faults.ts';
import { createKindHandler } from '#src/sim/kinds/index.ts';
import { RequestRecorder, type RecordedRequest, type SimStats } from '#src/sim/recorder.ts';
import { seededRandom, seedFromText } from '#src/sim/seeded-random.ts';
import { startSimServer } from '#src/sim/sim-server.ts';
import { nodeSpecProblems, resolveNodeSpec, type SimKind, type SimNodeSpec } from '#src/sim/spec.ts';

export interface SimNodeOptions {
  readonly clock?: Clock;
  /** Interface to bind; default 127.0.0.1. */
  readonly host?: string;
  /** Randomness for response ids; default a PRNG seeded from the node name. */
  readonly random?: () => number;
  /** Position in a fleet; names a node without one (`<kind>-<index>`). */
  readonly index?: number;
}

export interface SimNode {
  readonly name: string;
  readonly kind: SimKind;
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  modelIds(): string[];
  faults(): SimFaults;
  /** Merges into the current faults and returns the result. */
  setFaults(faults: Partial<SimFaults>): SimFaults;
  requests(): readonly RecordedRequest[];
  stats(): SimStats;
  clearRecording(): void;
  /** A test knob on its models (the router's crash, sleep, flood, oversize, drop: llamacpp-router-control.ts). */
  modelControl(
    action: string,
    body?: Readonly<Record<string, unknown>>,
  ): { ok: true; detail?: string } | { ok: false; error: string };
  /** Calls `listener` after each request arrives or ends, each connection opens or closes, and each change of its model residency (for tests to wait on); answers its unsubscribe. */
  onActivity(listener: () => void): () => void;
  /** Ends every connection (hung requests included) and stops all timers. */
  close(): Promise<void>;
}

function urlFor(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startSimNode(spec: SimNodeSpec, options: SimNodeOptions = {}): Promise<SimNode> {
  const node = resolveNodeSpec(spec, options.index ?? 0);
  const problems = nodeSpecProblems(node);
  if (problems.length > 0) {
    throw new Error(`invalid sim node '${node.name}': ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  }
  const clock = options.clock ?? systemClock;
  const host = options.host ?? '127.0.0.1';
  const recorder = new RequestRecorder();
  let faults: SimFaults = NO_FAULTS;
  let boundPort = 0;
  const handler = createKindHandler(
    {
      node,
      clock,
      random: options.random ?? seededRandom(seedFromText(node.name)),
      startedAtSec: Math.floor(clock.now() / 1000),
      residencyChanged: () => recorder.changed(),
    },
    () => boundPort,
  );
  const control: ControlTarget = {
    faults: () => faults,
    setFaults: (patch) => {
      faults = mergeFaults(faults, patch);
      return faults;
    },
    requests: () => recorder.requests(),
    stats: () => {
      const residency = handler.residency?.();
      return residency === undefined ? recorder.stats() : { ...recorder.stats(), residency };
    },
    reset: () => {
      recorder.clear();
      faults = NO_FAULTS;
    },
    modelControl: (action, body) =>
      handler.control?.(action, body) ?? { ok: false, error: 'this kind of node has no model controls' },
  };
  const server = await startSimServer({ host, port: node.port, clock, recorder, control, handler });
  boundPort = server.port;
  return {
    name: node.name,
    kind: node.kind,
    url: urlFor(host, server.port),
    port: server.port,
    modelIds: () => handler.modelIds(),
    faults: control.faults,
    setFaults: control.setFaults,
    requests: control.requests,
    stats: control.stats,
    clearRecording: () => recorder.clear(),
    modelControl: (action, body = {}) => control.modelControl?.(action, body) ?? { ok: false, error: 'no model controls' },
    onActivity: (listener) => recorder.onChange(listener),
    close: () => server.close(),
  };
}
