// The [mesh] table (federation, docs/federation.md): this site's identity and address, the libp2p
// listen and bootstrap addresses, the gossip timings and bounds, and [[mesh.sites]], the pinned key
// of every trusted site. Absent, the gateway runs alone exactly as before.
import { z } from 'zod';
import { CONFIG_DEFAULTS } from './defaults.ts';
import { parseListenMultiaddr, parsePeerId, parsePeerMultiaddr } from './mesh-addresses.ts';
import { normalizeNodeUrl } from './node-url.ts';
import { invalid, valid, type ParseResult } from './parse-result.ts';
import { parsePublicKey } from './public-key.ts';
import { name, NODE_NAME_RULE, parsedBy, positiveDurationMs, positiveSizeBytes, table, wholeAtLeastOne } from './schema-parts.ts';
import type { MeshConfig, MeshSitePin, MeshStaticModel } from './types.ts';

const DEFAULTS = CONFIG_DEFAULTS.mesh;
const KIB = 1024;
/** Enough for an empty record; below this no site could publish. */
const MIN_MESSAGE_BYTES = 4 * KIB;
/** gossipsub's own inbound limit is a few MiB; a record this large would already be thousands of models. */
const MAX_MESSAGE_BYTES = 1024 * KIB;
/** Above this the per-peer bound bounds nothing a 2-core site could judge. */
const MAX_PEER_RATE = 100_000;

/** Site ids travel in records, metrics labels, headers and logs: the node-name rule keeps them safe there. */
export function isSiteId(text: string): boolean {
  return NODE_NAME_RULE.test(text);
}

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
  // Checked against [[tenants]] by cross-checks.ts.
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

export const meshSchema = table({
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
  // Freshness beyond the heartbeat and the repeats (ids, keys, peers, static models): cross-checks.ts.
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
