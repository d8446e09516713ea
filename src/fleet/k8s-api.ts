// How a Kubernetes source reaches the API: one page of the Service's EndpointSlices, and a watch
// from a resourceVersion. k8s-client.ts is the real one (the official client library for the
// kubeconfig or service account, every read bounded); tests may hand in another. And what it
// answers: the slices, read into plain records (k8s-slices.ts reads them).

import type { KubernetesNodeSourceSpec } from '#src/config/index.ts';

export interface SlicePort {
  /** "" for the Service's one unnamed port. */
  readonly name: string;
  readonly port: number;
}

export interface SliceEndpoint {
  /** The first address (the API says every address of an endpoint is fungible). */
  readonly address: string;
  readonly ready: boolean | undefined;
  readonly serving: boolean | undefined;
  readonly terminating: boolean | undefined;
  /** The pod (or other object) behind it: its name. */
  readonly target: string | undefined;
  /** The Kubernetes node it runs on, and its zone (labels only). */
  readonly host: string | undefined;
  readonly zone: string | undefined;
}

export interface EndpointSlice {
  readonly name: string;
  readonly addressType: string;
  /** undefined: the slice says nothing of ports (a selector-less Service's "all ports"). */
  readonly ports: readonly SlicePort[] | undefined;
  readonly endpoints: readonly SliceEndpoint[];
}

/** One page of the list (its slices read), or why not (`gone`: 410, the list's snapshot expired). */
export type ListPage =
  | {
      readonly ok: true;
      readonly slices: readonly EndpointSlice[];
      readonly resourceVersion: string;
      /** The next page's token; undefined = the last page. */
      readonly continue: string | undefined;
    }
  | { readonly ok: false; readonly reason: string; readonly gone: boolean };

export type WatchEnd =
  /** The server ended it (its timeoutSeconds) or the caller aborted it: resume from the last resourceVersion. */
  | { readonly kind: 'closed' }
  /** It broke after it had opened (the connection dropped, no byte within its bound): resume, as after 'closed'. */
  | { readonly kind: 'broken'; readonly reason: string }
  /** HTTP 410: the resourceVersion is too old; list again. */
  | { readonly kind: 'gone'; readonly reason: string }
  | { readonly kind: 'failed'; readonly reason: string };

export interface WatchHandlers {
  /** The watch was accepted (HTTP 200): the API answers again. */
  onOpen(): void;
  /** One event's JSON; false = stop reading (a relist or an error comes next). */
  onEvent(event: unknown): boolean;
}

export interface KubeApi {
  /** Where it asks, for reasons: "EndpointSlices of models/vllm at https://10.0.0.1:443". */
  readonly where: string;
  list(continueToken: string | undefined, signal: AbortSignal): Promise<ListPage>;
  watch(resourceVersion: string, handlers: WatchHandlers, signal: AbortSignal): Promise<WatchEnd>;
  /** Its connections closed; nothing is called after. */
  close(): void;
}

/** Opens the API for one source (loads the client, reads the kubeconfig or the service account); rejects with the reason. */
export type KubeApiOpener = (spec: KubernetesNodeSourceSpec) => Promise<KubeApi>;
