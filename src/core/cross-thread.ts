// A feature's half of the link between the owner thread and a request worker (`[server] workers`
// > 1), after core/part-key.ts's habit: the feature owns its messages, and src/workers/ carries
// them opaquely under the feature's name — the worker messages name no feature. The owner side
// is given by the feature list (gateway/features.ts: the tenants' ledger desk, the mesh's mirror of
// the sites and its replay memory); the worker side is started, by that name, from the request
// plane's list (plane/request-features.ts), and gives the worker's request plane the feature's port.
// An absent feature has no side on either thread and sends nothing.

import type { PartKey } from './part-key.ts';

/** A message of a feature's own, as it crosses: plain data (structured clone), never read by workers/. */
export type FeatureMessage = unknown;

/** The owner's side of one feature's crossing, for every worker. */
export interface OwnerSide {
  /** Its name: its messages cross under it, and the worker side of that name is started for it. */
  readonly name: string;
  /** What a worker starting now begins with (plain data): the state last sent to every worker. */
  init(): FeatureMessage;
  /** What changed since last asked, for every worker (the owner asks on each sync and once the features started). */
  changes?(): readonly FeatureMessage[];
  /** One worker's link: `send` reaches that worker's side; `failed` logs a failure of the owner's work for it. */
  link(send: (message: FeatureMessage) => void, failed: (error: unknown, what: string) => void): OwnerSideLink;
}

/** The owner's end of one feature's crossing to one worker. */
export interface OwnerSideLink {
  /** A message from the worker's side. */
  receive(message: FeatureMessage): void;
  /** The worker ended: whatever it held is given back. */
  close(): void;
}

/** A worker's side of one feature's crossing. */
export interface WorkerSide {
  /** A message from the owner's side. */
  receive(message: FeatureMessage): void;
  /** Its port for this worker's request plane, under its feature's key; undefined = none. */
  readonly port: readonly [PartKey<unknown>, unknown] | undefined;
  /** The worker has drained (its requests are done): what the side holds is let go (a file it opened); absent = nothing. */
  close?(): void;
}
