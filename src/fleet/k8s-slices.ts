// Pure: EndpointSlices (discovery.k8s.io/v1, as the API server answers them: untrusted JSON) read
// into plain records, and the nodes they make. An endpoint is a node while it is ready and serving
// and not terminating (a nil condition counts as the API documents: ready and serving, not
// terminating); a terminating endpoint leaves the set, so its node drains like any node that leaves.
// Names are stable: `<source>-<pod>` (the endpoint's targetRef), else `<source>-<address>-<port>`.

import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { KubernetesNodeSourceSpec } from '#src/config/index.ts';
import { isRecord } from '#src/core/is-record.ts';
import { dnsNodeName } from './dns-answer.ts';
import type { SourcedNode } from './node-source.ts';
import type { EndpointSlice, SliceEndpoint, SlicePort } from './k8s-api.ts';
import { byName } from './sourced-nodes.ts';

export type { EndpointSlice, SliceEndpoint, SlicePort } from './k8s-api.ts';

/** Endpoints that make no node, by why (shown in the source's log line and the test's asserts). */
export interface HeldBack {
  readonly terminating: number;
  readonly notReady: number;
  readonly noPort: number;
}

type Read<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

const MAX_NAME = 64;
const NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$/;
const FAMILY_ORDER: Readonly<Record<string, number>> = { IPv4: 0, IPv6: 1, FQDN: 2 };

/** One EndpointSlice object, or why it cannot be read. */
export function readSlice(object: unknown): Read<EndpointSlice> {
  if (!isRecord(object)) return { ok: false, reason: 'an EndpointSlice that is not an object' };
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const name = metadata['name'];
  if (typeof name !== 'string' || name === '') return { ok: false, reason: 'an EndpointSlice without metadata.name' };
  const addressType = typeof object['addressType'] === 'string' ? object['addressType'] : 'IPv4';
  const rawPorts = object['ports'];
  let ports: SlicePort[] | undefined;
  if (Array.isArray(rawPorts)) {
    ports = [];
    for (const port of rawPorts as unknown[]) {
      if (!isRecord(port) || !Number.isInteger(port['port'])) continue;
      const number = port['port'] as number;
      if (number < 1 || number > 65_535) continue;
      ports.push({ name: typeof port['name'] === 'string' ? port['name'] : '', port: number });
    }
  }
  const rawEndpoints = object['endpoints'];
  if (rawEndpoints !== undefined && rawEndpoints !== null && !Array.isArray(rawEndpoints))
    return { ok: false, reason: `EndpointSlice ${name}: endpoints is not a list` };
  const endpoints: SliceEndpoint[] = [];
  for (const endpoint of (rawEndpoints ?? []) as unknown[]) {
    if (!isRecord(endpoint) || !Array.isArray(endpoint['addresses'])) continue;
    const address = (endpoint['addresses'] as unknown[])[0];
    if (typeof address !== 'string' || !addressOf(addressType, address)) continue;
    const conditions = isRecord(endpoint['conditions']) ? endpoint['conditions'] : {};
    const target = isRecord(endpoint['targetRef']) ? endpoint['targetRef']['name'] : undefined;
    endpoints.push({
      address,
      ready: flag(conditions['ready']),
      serving: flag(conditions['serving']),
      terminating: flag(conditions['terminating']),
      target: typeof target === 'string' && target !== '' ? target : undefined,
      host: typeof endpoint['nodeName'] === 'string' ? endpoint['nodeName'] : undefined,
      zone: typeof endpoint['zone'] === 'string' ? endpoint['zone'] : undefined,
    });
  }
  return { ok: true, value: { name, addressType, ports, endpoints } };
}

/** An address as its slice's type says (an FQDN slice: a DNS name); anything else is skipped. */
function addressOf(addressType: string, address: string): boolean {
  if (addressType === 'FQDN') return HOSTNAME.test(address);
  return isIP(address) !== 0;
}

function flag(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** A node while ready and serving (nil = yes) and not terminating (nil = no). */
export function endpointServes(endpoint: SliceEndpoint): 'serves' | 'terminating' | 'not-ready' {
  if (endpoint.terminating === true) return 'terminating';
  if (endpoint.ready === false || endpoint.serving === false) return 'not-ready';
  return 'serves';
}

/** The slice's port the source wants: the named one, else the slice's only port. */
function slicePort(spec: KubernetesNodeSourceSpec, slice: EndpointSlice): number | undefined {
  if (slice.ports === undefined) return undefined;
  if (spec.portName !== undefined) return slice.ports.find((p) => p.name === spec.portName)?.port;
  return slice.ports.length === 1 ? slice.ports[0]?.port : undefined;
}

/** `<source>-<pod>` when that is a valid node name, else the pod hashed; no pod: `<source>-<address>-<port>`. */
export function k8sNodeName(source: string, endpoint: SliceEndpoint, port: number): string {
  if (endpoint.target === undefined) return dnsNodeName(source, endpoint.address, port);
  const plain = `${source}-${endpoint.target}`;
  if (plain.length <= MAX_NAME && NAME_RULE.test(plain)) return plain;
  return `${source}-${createHash('sha256').update(endpoint.target).digest('hex').slice(0, 16)}`;
}

/**
 * The nodes every slice makes, each name once (a dual-stack pod is in an IPv4 and an IPv6 slice:
 * the IPv4 address is taken), sorted by name; and the endpoints held back, by why.
 */
export function nodesFromSlices(
  spec: KubernetesNodeSourceSpec,
  slices: Iterable<EndpointSlice>,
): { nodes: SourcedNode[]; heldBack: HeldBack } {
  const held = { terminating: 0, notReady: 0, noPort: 0 };
  const chosen = new Map<string, { node: SourcedNode; rank: string }>();
  const ordered = [...slices].sort(
    (a, b) => (FAMILY_ORDER[a.addressType] ?? 3) - (FAMILY_ORDER[b.addressType] ?? 3) || (a.name < b.name ? -1 : 1),
  );
  for (const slice of ordered) {
    const port = slicePort(spec, slice);
    for (const endpoint of slice.endpoints) {
      const serves = endpointServes(endpoint);
      if (serves === 'terminating') held.terminating += 1;
      else if (serves === 'not-ready') held.notReady += 1;
      else if (port === undefined) held.noPort += 1;
      if (serves !== 'serves' || port === undefined) continue;
      const name = k8sNodeName(spec.name, endpoint, port);
      const rank = `${FAMILY_ORDER[slice.addressType] ?? 3}:${endpoint.address}`;
      const kept = chosen.get(name);
      if (kept !== undefined && kept.rank <= rank) continue;
      chosen.set(name, { node: sliceNode(spec, endpoint, name, port), rank });
    }
  }
  return { nodes: [...chosen.values()].map((c) => c.node).sort(byName), heldBack: held };
}

function sliceNode(spec: KubernetesNodeSourceSpec, endpoint: SliceEndpoint, name: string, port: number): SourcedNode {
  const host = isIP(endpoint.address) === 6 ? `[${endpoint.address}]` : endpoint.address;
  return Object.freeze({
    name,
    url: `${spec.scheme}://${host}:${port}`,
    kind: spec.nodeKind,
    group: spec.group,
    labels: Object.freeze({
      source: spec.name,
      namespace: spec.namespace,
      service: spec.service,
      address: endpoint.address,
      port: String(port),
      ...(endpoint.target === undefined ? {} : { pod: endpoint.target }),
      ...(endpoint.host === undefined ? {} : { k8s_node: endpoint.host }),
      ...(endpoint.zone === undefined ? {} : { zone: endpoint.zone }),
    }),
  });
}
