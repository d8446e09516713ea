// A request worker's share of federation ([mesh] with `[server] workers` > 1): the same MeshLink the
// owner's request path has — this site's id, its key, the pins and skew of the config in force (a
// reload's config reaches the worker, so they follow it) — with the remote sites read from the
// mirror the owner pushes, and the key handed over by the owner once its mesh part has loaded it:
// the worker's sites port. The request plane builds forwarding's pools and back-offs over it (the
// unreachable-site back-off is per worker: a site one worker found down is still tried by the
// others until they fail on it too).

import { createPrivateKey } from 'node:crypto';
import type { Clock } from '#src/core/clock.ts';
import type { GatewayConfig } from '#src/config/index.ts';
import { pinnedPublicKey } from '#src/mesh/pinned-key.ts';
import { meshLinkFor, type MeshLink } from '#src/mesh/forwarding/index.ts';
import type { SiteKey } from '#src/mesh/site-key.ts';
import { siteKeyFromPrivateKey } from '#src/mesh/site-key-file.ts';
import type { MeshInit, WorkerMessage } from './protocol.ts';
import { OwnerReplayGuard } from './replay-claims.ts';
import { SiteMirror } from './site-mirror.ts';

export interface WorkerMeshDeps {
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  /** To the owner thread (replay claims). */
  readonly send: (message: WorkerMessage) => void;
}

export class WorkerMesh {
  readonly link: MeshLink;
  readonly mirror: SiteMirror;
  /** Asks the owner to record each verified forward's signature (one memory for every worker). */
  readonly replay: OwnerReplayGuard;
  #key: SiteKey | undefined;

  private constructor(link: MeshLink, mirror: SiteMirror, replay: OwnerReplayGuard) {
    this.link = link;
    this.mirror = mirror;
    this.replay = replay;
  }

  /** The worker's mesh part; undefined when the config has no [mesh] (no federation work per request). */
  static start(init: MeshInit | undefined, deps: WorkerMeshDeps): WorkerMesh | undefined {
    const mirror = new SiteMirror(init?.sites ?? []);
    const holder: { mesh?: WorkerMesh } = {};
    const replay = new OwnerReplayGuard(deps.send, deps.clock);
    const link = meshLinkFor(deps.config, () => holder.mesh?.key(), mirror, replay, pinnedPublicKey);
    if (link === undefined) return undefined;
    const mesh = new WorkerMesh(link, mirror, replay);
    holder.mesh = mesh;
    if (init?.keyPem !== undefined) mesh.setKey(init.keyPem);
    return mesh;
  }

  key(): SiteKey | undefined {
    return this.#key;
  }

  /** The site key, as the owner's mesh part loaded it (PKCS#8 PEM; never logged). */
  setKey(pem: string): void {
    this.#key = siteKeyFromPrivateKey(createPrivateKey({ key: pem, format: 'pem' }));
  }
}

/** Kept here for the worker's side too (key-pem.ts holds it, apart from libp2p). */
export { keyPemOf } from './key-pem.ts';
