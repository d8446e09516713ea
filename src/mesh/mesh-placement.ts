// Pure: where a site keeps its mesh files, how its replay memory is split, which registry changes
// may change its published model set, and when its replicas share one libp2p peer id
// (docs/deploy.md). The mesh feature (mesh-feature.ts) wires by these answers.

import type { MeshConfig } from '#src/mesh/config/mesh-config.ts';
import type { RegistryEvents } from '#src/nodes/index.ts';

type Listing = RegistryEvents['node:discovery']['from'];
import { replayRecordFileFor } from './forwarding/index.ts';
import { stateFileFor } from './revision-state-file.ts';
import type { MeshOptions } from './mesh-options.ts';

/** Said at start by a replica ([cluster] with [mesh]) whose libp2p identity is the site key (docs/deploy.md). */
export const MESH_REPLICAS_SHARE_A_PEER_ID =
  "[mesh] with [cluster] and no [mesh] peer_key_file: every replica of this site shares the site key's libp2p peer id, and a peer site keeps one gossip stream per peer id, so it hears one replica only (the others learn no other site; when the publisher dies the site turns stale there). Give each replica its own peer_key_file (switchyard keygen) and list each replica's address in the other sites' [mesh] peers";

/** The remote sites pinned in `config` (its own pin aside): how many shares the replay memory has. */
export function remoteSiteCount(config: MeshConfig | undefined): number {
  return config === undefined ? 0 : config.sites.filter((pin) => pin.id !== config.site).length;
}

/** Where this gateway keeps its replay record (MeshOptions.replayFile), or false for none. */
export function replayRecordPath(
  options: MeshOptions | undefined,
  config: MeshConfig | undefined,
  clustered: boolean,
): string | false {
  if (options?.replayFile !== undefined) return options.replayFile;
  if (config === undefined || options?.key !== undefined || options?.replaySinceMs !== undefined) return false;
  // Replicas of a site sharing key_file would overwrite each other's record: each needs its own peer_key_file.
  if (clustered && config.peerKeyFile === undefined) return false;
  return replayRecordFileFor(config);
}

/** The mesh state file (highest accepted revisions): the caller's, else beside key_file when the key is read from it. */
export function meshStateFile(options: MeshOptions | undefined, config: MeshConfig | undefined): string | false {
  return options?.stateFile ?? (options?.key === undefined && config !== undefined ? stateFileFor(config.keyFile) : false);
}

/** Registry changes that may change this site's model set (listings are watched apart: they repeat every poll). */
export const SET_CHANGES = ['node:health-changed', 'node:capacity', 'node:added', 'node:removed', 'node:wake'] as const;

/** A node's listing changed what it offers (its phase or its models), not just its poll time. */
export function listingChanged(from: Listing, to: Listing): boolean {
  return from.phase !== to.phase || from.models !== to.models;
}

/** A replica of a cluster whose gossip identity is the site key: peer sites hear one replica only. */
export function replicasSharePeerId(clustered: boolean, peerId: string, sitePeerId: string): boolean {
  return clustered && peerId === sitePeerId;
}
