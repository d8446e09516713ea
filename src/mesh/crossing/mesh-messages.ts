// The mesh's messages between the owner thread (its mesh feature: the site store, the key, the one
// replay memory) and a request worker (its mesh link): plain data, carried by src/workers/ under
// the mesh's name (core/cross-thread.ts).

import type { ClaimVerdict, ForwardClaim, ReplayOp } from '../forwarding/index.ts';
import type { SiteWire } from './site-mirror.ts';

/** The mesh's crossing's name (the worker side of this name is started for it). */
export const MESH_CROSSING = 'mesh';

/** What a worker's mesh link starts with ([mesh] only; the key and the sites follow by message). */
export interface MeshInit {
  /** The site key as PKCS#8 PEM, once the owner's mesh feature has loaded it. Never logged. */
  readonly keyPem: string | undefined;
  readonly sites: readonly SiteWire[];
}

export type MeshOwnerMessage =
  | { readonly t: 'sites'; readonly sites: readonly SiteWire[] }
  | { readonly t: 'site-key'; readonly pem: string }
  /** The owner's answer to a worker's `claim` (replay-claims.ts). */
  | { readonly t: 'claimed'; readonly id: number; readonly verdict: ClaimVerdict };

/**
 * A forwarded request's signature, asked of the gateway's one memory: `hold` at its head (a
 * replay, a copy in flight, a full share?), `use` once admitted, `release` when refused before.
 */
export type MeshWorkerMessage = { readonly t: 'claim'; readonly id: number; readonly claim: ForwardClaim; readonly op: ReplayOp };
