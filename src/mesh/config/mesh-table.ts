// The [mesh] table, the mesh's config table (config/config-table.ts; federation, docs/federation.md):
// this site's identity and address, the libp2p listen and bootstrap addresses, the gossip timings
// and bounds, and [[mesh.sites]], the pinned key of every trusted site. Absent, the gateway runs
// alone exactly as before. Imports zod, config/ and the mesh's config files only (the libp2p
// address libraries load the first time a [mesh] address is checked: mesh-addresses.ts).
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { ConfigTable } from '#src/config/config-table.ts';
import { formatDurationMs } from '#src/config/duration.ts';
import { findRepeats, type NameClash } from '#src/config/name-clashes.ts';
import { normalizeNodeUrl } from '#src/config/node-url.ts';
import { invalid, valid, type ParseResult } from '#src/config/parse-result.ts';
import { plural } from '#src/config/plural.ts';
import { entriesOf, fieldOf, parsed, tableOf, under, type RawTable } from '#src/config/raw-document.ts';
import { name, parsedBy, positiveDurationMs, positiveSizeBytes, table, wholeAtLeastOne } from '#src/config/schema-parts.ts';
import type { GatewayConfig } from '#src/config/types.ts';
import { parseListenMultiaddr, parsePeerId, parsePeerMultiaddr } from './mesh-addresses.ts';
import { isSiteId, MESH_DEFAULTS, type MeshConfig, type MeshSitePin, type MeshStaticModel } from './mesh-config.ts';
import { MESH_OPEN_TO_CLIENTS, meshOpenToClients } from './mesh-exposure.ts';
import { parsePublicKey } from './public-key.ts';

const DEFAULTS = MESH_DEFAULTS;
const KIB = 1024;
/** Enough for an empty record; below this no site could publish. */
const MIN_MESSAGE_BYTES = 4 * KIB;
/** gossipsub's own inbound limit is a few MiB; a record this large would already be thousands of models. */
const MAX_MESSAGE_BYTES = 1024 * KIB;
/** Above this the per-peer bound bounds nothing a 2-core site could judge. */
const MAX_PEER_RATE = 100_000;

export const siteId = name.refine((text) => text.trim() !== text || text === '' || isSiteId(text), {
  error: 'must be 1 to 64 characters: letters A-Z a-z, digits, and . _ : @ - (not first)',
});

/** A pinned public key, kept as written (the canonical spelling is checked); the bytes are decoded where keys are used. */
export const pinnedKeyText = z.string().pipe(
  parsedBy((text: string) => {
    const parsed = parsePublicKey(text);
    return parsed.ok ? valid(text) : invalid<string>(parsed.message);
  }),
);

const pinSchema = table({
  id: siteId,
  public_key: pinnedKeyText,
  url: z.string().pipe(parsedBy(normalizeNodeUrl)).optional(),
  // Checked against [[tenants]] by the tenants' table (tenants/tenants-table.ts).
  tenant: name.optional(),
}).transform((pin): MeshSitePin => ({
  id: pin.id,
  publicKey: pin.public_key,
  ...(pin.url === undefined ? {} : { url: pin.url }),
  ...(pin.tenant === undefined ? {} : { tenant: pin.tenant }),
}));

const staticModelSchema = table({
  id: name.pipe(z.string().max(256, { error: 'must be at most 256 characters' })),
  ctx: wholeAtLeastOne.optional(),
}).transform((model): MeshStaticModel => (model.ctx === undefined ? { id: model.id } : { id: model.id, ctx: model.ctx }));

const stringArray = (parse: (text: string) => ParseResult<string>, what: string) =>
  z.array(z.string().pipe(parsedBy(parse)), {
    error: (issue) => (issue.input === undefined ? 'is required' : `must be an array of ${what}`),
  });

const meshSchema = table({
  site: siteId,
  url: z.string().pipe(parsedBy(normalizeNodeUrl)),
  key_file: z.string().min(1, { error: 'must name the key file written by switchyard keygen --out FILE' }),
  peer_key_file: z
    .string()
    .min(1, { error: "must name a key file written by switchyard keygen --out FILE (this replica's own libp2p identity)" })
    .optional(),
  listen: stringArray(parseListenMultiaddr, 'multiaddrs, like ["/ip4/0.0.0.0/tcp/4001"]').min(1, {
    error: 'must list at least one multiaddr, like ["/ip4/0.0.0.0/tcp/4001"]',
  }),
  peers: stringArray(parsePeerMultiaddr, 'multiaddrs ending in /p2p/<peer id>').default([...DEFAULTS.peers]),
  allowed_peers: stringArray(parsePeerId, 'peer ids, like ["12D3KooW..."]').default([]),
  max_peer_messages_per_second: wholeAtLeastOne
    .pipe(z.int().max(MAX_PEER_RATE, { error: `must be at most ${MAX_PEER_RATE}` }))
    .default(DEFAULTS.maxPeerMessagesPerSecond),
  heartbeat: positiveDurationMs.default(DEFAULTS.heartbeatMs),
  freshness: positiveDurationMs.optional(),
  max_models_per_site: wholeAtLeastOne.default(DEFAULTS.maxModelsPerSite),
  max_clock_skew: positiveDurationMs.default(DEFAULTS.maxClockSkewMs),
  max_remembered_forwards: wholeAtLeastOne.default(DEFAULTS.maxRememberedForwards),
  max_message_bytes: positiveSizeBytes
    .pipe(
      z
        .number()
        .min(MIN_MESSAGE_BYTES, { error: `must be at least ${MIN_MESSAGE_BYTES / KIB}KiB` })
        .max(MAX_MESSAGE_BYTES, { error: `must be at most ${MAX_MESSAGE_BYTES / KIB}KiB` }),
    )
    .default(DEFAULTS.maxMessageBytes),
  static_models: z.array(staticModelSchema, { error: 'must be an array of tables like { id = "m", ctx = 8192 }' }).default([]),
  sites: z.array(pinSchema, { error: 'must be an array of tables, written [[mesh.sites]]' }).default([]),
})
  // Freshness beyond the heartbeat and the repeats (ids, keys, peers, static models): meshClashes below.
  .transform((mesh): MeshConfig => ({
    site: mesh.site,
    url: mesh.url,
    keyFile: mesh.key_file,
    ...(mesh.peer_key_file === undefined ? {} : { peerKeyFile: mesh.peer_key_file }),
    listen: mesh.listen,
    peers: mesh.peers,
    allowedPeers: mesh.allowed_peers,
    maxPeerMessagesPerSecond: mesh.max_peer_messages_per_second,
    heartbeatMs: mesh.heartbeat,
    freshnessMs: mesh.freshness ?? mesh.heartbeat * DEFAULTS.freshnessHeartbeats,
    maxModelsPerSite: mesh.max_models_per_site,
    maxClockSkewMs: mesh.max_clock_skew,
    maxRememberedForwards: mesh.max_remembered_forwards,
    maxMessageBytes: mesh.max_message_bytes,
    staticModels: mesh.static_models,
    sites: mesh.sites,
  }));

export const meshTable = Object.freeze<ConfigTable<'mesh'>>({
  name: 'mesh',
  schema: () => meshSchema.optional(),
  crossChecks: (doc) => meshClashes(doc),
  summary: (config) => [describeMesh(config.mesh)],
  warnings: (config) =>
    meshOpenToClients(config) ? [{ message: MESH_OPEN_TO_CLIENTS, fields: { site: config.mesh?.site } }] : [],
  restartOnly: (previous, next) => meshRestartOnly(previous.mesh, next.mesh),
});

/**
 * The site's identity (key, id, url) and its libp2p sockets are fixed for the mesh's life; pins,
 * peers, timings and caps apply live (meshChangedLive).
 */
function meshRestartOnly(previous: MeshConfig | undefined, next: MeshConfig | undefined): string[] {
  if ((previous === undefined) !== (next === undefined)) return ['mesh'];
  if (previous === undefined || next === undefined) return [];
  const changed: string[] = [];
  if (previous.site !== next.site) changed.push('mesh.site');
  if (previous.url !== next.url) changed.push('mesh.url');
  if (previous.keyFile !== next.keyFile) changed.push('mesh.key_file');
  if (previous.peerKeyFile !== next.peerKeyFile) changed.push('mesh.peer_key_file');
  if (JSON.stringify(previous.listen) !== JSON.stringify(next.listen)) changed.push('mesh.listen');
  return changed;
}

/**
 * Both configs have [mesh] and a setting a running mesh applies live differs: the pins
 * ([[mesh.sites]]), peers, heartbeat, freshness, caps, clock skew or static models. Adding or
 * removing [mesh], or changing its site, url, key_file or listen, needs a restart instead
 * (meshRestartOnly).
 */
export function meshChangedLive(previous: Pick<GatewayConfig, 'mesh'>, next: Pick<GatewayConfig, 'mesh'>): boolean {
  return (
    previous.mesh !== undefined && next.mesh !== undefined && !isDeepStrictEqual(liveMesh(previous.mesh), liveMesh(next.mesh))
  );
}

/** The [mesh] settings a reload applies live: all but the identity and the listening sockets. */
function liveMesh(mesh: MeshConfig): Omit<MeshConfig, 'site' | 'url' | 'keyFile' | 'peerKeyFile' | 'listen'> {
  const { site: _site, url: _url, keyFile: _keyFile, peerKeyFile: _peerKeyFile, listen: _listen, ...live } = mesh;
  return live;
}

/** Freshness beyond the heartbeat, and each pin, peer and static model listed once. */
function meshClashes(doc: RawTable): NameClash[] {
  const mesh = tableOf(doc['mesh']);
  if (mesh === undefined) return [];
  const clashes: NameClash[] = [];
  const heartbeat = mesh['heartbeat'] === undefined ? DEFAULTS.heartbeatMs : parsed(positiveDurationMs, mesh['heartbeat']);
  const freshness = mesh['freshness'] === undefined ? undefined : parsed(positiveDurationMs, mesh['freshness']);
  if (heartbeat !== undefined && (mesh['freshness'] === undefined || freshness !== undefined)) {
    if ((freshness ?? heartbeat * DEFAULTS.freshnessHeartbeats) <= heartbeat)
      clashes.push({
        path: ['mesh', 'freshness'],
        message: 'must be longer than heartbeat, or every site would turn stale between two heartbeats (default: 3 × heartbeat)',
      });
  }
  const pins = entriesOf(mesh['sites']);
  clashes.push(
    ...under(
      ['mesh', 'sites'],
      findRepeats(
        pins.map((pin) => fieldOf(pin, 'id', siteId)),
        'id',
        (id) => `site "${id}" is pinned twice; each site has one key`,
      ),
    ),
    ...under(
      ['mesh', 'sites'],
      findRepeats(
        pins.map((pin) => fieldOf(pin, 'public_key', pinnedKeyText)),
        'public_key',
        () => 'the same key is pinned for two sites; each site must have its own key, or one could speak for the other',
      ),
    ),
    ...under(
      ['mesh', 'allowed_peers'],
      findRepeats(
        entriesOf(mesh['allowed_peers'], (peer) => {
          const id = typeof peer === 'string' ? parsePeerId(peer) : undefined;
          return id?.ok === true ? id.value : undefined;
        }),
        undefined,
        (id) => `peer ${id} is listed twice`,
      ),
    ),
    ...under(
      ['mesh', 'static_models'],
      findRepeats(
        entriesOf(mesh['static_models']).map((model) => fieldOf(model, 'id', name)),
        'id',
        (id) => `model "${id}" is listed twice`,
      ),
    ),
  );
  return clashes;
}

function describeMesh(mesh: MeshConfig | undefined): string {
  if (mesh === undefined) return 'mesh: none (this gateway runs alone)';
  const pins = mesh.sites.map((pin) => pin.id).join(', ');
  return (
    `mesh: site ${mesh.site} at ${mesh.url}, ${plural(mesh.peers.length, 'bootstrap peer')}, ` +
    `${plural(mesh.sites.length, 'pinned site')}${pins === '' ? '' : ` (${pins})`}, ` +
    `heartbeat ${formatDurationMs(mesh.heartbeatMs)}, fresh for ${formatDurationMs(mesh.freshnessMs)}`
  );
}
