// Where nodes come from: a node source answers the nodes it sees now and says when that changes.
// The `[[nodes]]` list is the first source (static-source.ts), DNS the second (dns-source.ts),
// Kubernetes EndpointSlices the third (k8s-source.ts); each is one entry in NODE_SOURCES. Every source
// passes the same contract suite (test/contract/node-source.contract.test.ts).

import type { Clock } from '#src/core/clock.ts';
import type { NodeKind, NodeSourceSpec, NodeSpec } from '#src/config/index.ts';
import type { DnsLookup } from './dns-records.ts';
import type { KubeApiOpener } from './k8s-api.ts';

/** One node as a source sees it; `name` is stable across answers for the same server (state is kept by name). */
export interface SourcedNode {
  readonly name: string;
  readonly url: string;
  readonly kind: NodeKind;
  readonly group: string | undefined;
  readonly labels: Readonly<Record<string, string>>;
}

/** Whether the source's last look succeeded; a failing source keeps its last good set and says why. */
export type SourceState =
  | { readonly ok: true; readonly lastLookAtMs: number | undefined }
  | { readonly ok: false; readonly reason: string; readonly sinceMs: number; readonly lastLookAtMs: number };

export type SourceChange = 'nodes' | 'state';

export interface NodeSource {
  readonly name: string;
  readonly kind: string;
  /** The nodes it sees now (its last good answer); never throws, never does I/O. */
  nodes(): readonly SourcedNode[];
  state(): SourceState;
  /** Called after `nodes()` changed (`nodes`) or the state turned or its reason changed (`state`); answers the unsubscribe. */
  onChange(listener: (what: SourceChange) => void): () => void;
  /** Begins looking (a source with nothing to look at does nothing). */
  start(): void;
  /** Stops every timer and lookup; nothing is called after. */
  stop(): void;
  /** A request to one of its nodes failed: look again soon (no sooner than the source's own minimum). */
  lookAgain(): void;
  /** The whole node spec for one of its nodes: the settings its answer does not carry come from the source's config. */
  spec(node: SourcedNode): NodeSpec;
}

/** What a source is built from: the `[[nodes]]` list for `static`, a `[[node_sources]]` entry for the others. */
export type NodeSourceConfig =
  { readonly kind: 'static'; readonly name: string; readonly nodes: readonly NodeSpec[] } | NodeSourceSpec;

export interface NodeSourceDeps {
  readonly clock: Clock;
  readonly lookup?: DnsLookup;
  /** How a Kubernetes source reaches the API; absent = the official client (k8s-client.ts, loaded only then). */
  readonly kubeApi?: KubeApiOpener;
}

export type NodeSourceFactory = (config: NodeSourceConfig, deps: NodeSourceDeps) => NodeSource;
