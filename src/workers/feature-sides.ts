// A request worker's sides of the features' crossings (core/cross-thread.ts): each started, by its
// name, from what the owner began it with (WorkerInit.features), through the request plane's
// feature list (plane/request-features.ts, WORKER_SIDES); the owner's messages handed to each by
// name, unread; their ports given to the worker's request plane, each under its feature's key.

import type { FeatureMessage, WorkerSide } from '#src/core/cross-thread.ts';
import type { PartKey, Parts } from '#src/core/part-key.ts';
import type { WorkerSideHost, WorkerSideStart } from '#src/plane/index.ts';
import type { FeatureEnvelope, WorkerMessage } from './protocol.ts';

export class WorkerFeatureSides {
  readonly #sides: ReadonlyMap<string, WorkerSide>;

  private constructor(sides: ReadonlyMap<string, WorkerSide>) {
    this.#sides = sides;
  }

  /** Starts the side of every feature the owner began one for (a side with nothing to do here is left out). */
  static async start(
    inits: Readonly<Record<string, FeatureMessage>>,
    starters: Readonly<Record<string, WorkerSideStart>>,
    host: Omit<WorkerSideHost, 'send'> & { readonly send: (message: WorkerMessage) => void },
  ): Promise<WorkerFeatureSides> {
    const started = await Promise.all(
      Object.entries(inits).map(async ([name, init]) => {
        const start = starters[name];
        if (start === undefined) throw new Error(`the owner began a crossing no worker side is listed for: ${name}`);
        const side = await start(init, { ...host, send: (message) => host.send({ t: 'feature', name, message }) });
        return side === undefined ? [] : [[name, side] as const];
      }),
    );
    return new WorkerFeatureSides(new Map(started.flat()));
  }

  /** An owner's message for one feature's side. */
  receive(envelope: FeatureEnvelope): void {
    this.#sides.get(envelope.name)?.receive(envelope.message);
  }

  /** The worker has drained: each side lets go of what it holds. */
  close(): void {
    for (const side of this.#sides.values()) side.close?.();
  }

  /** The features' ports for the worker's request plane, each under its key. */
  ports(): Parts {
    const ports = new Map<PartKey<unknown>, unknown>();
    for (const side of this.#sides.values()) if (side.port !== undefined) ports.set(side.port[0], side.port[1]);
    return ports;
  }
}
