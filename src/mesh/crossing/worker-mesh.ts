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
import type { WorkerSide } from '#src/core/cross-thread.ts';
import { pinnedPublicKey } from '../pinned-key.ts';
import { meshLinkFor, SITES_PORT, type MeshLink } from '../forwarding/index.ts';
import type { SiteKey } from '../site-key.ts';
import { siteKeyFromPrivateKey } from '../site-key-file.ts';
import type { MeshInit, MeshOwnerMessage, MeshWorkerMessage } from './mesh-messages.ts';
import { OwnerReplayGuard } from './replay-claims.ts';
import { SiteMirror } from './site-mirror.ts';

export interface WorkerMeshDeps {
  readonly config: () => GatewayConfig;
  readonly clock: Clock;
  /** To the owner thread (replay claims). */
  readonly send: (message: MeshWorkerMessage) => void;
}

export class WorkerMesh implements WorkerSide {
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

  /** The worker's mesh link; undefined when the config has no [mesh] (no federation work per request). */
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

  /** The worker's sites port, for its request plane. */
  get port(): readonly [typeof SITES_PORT, MeshLink] {
    return [SITES_PORT, this.link];
  }

  /** The owner's mesh feature's messages: the sites' views, the key once loaded, a claim's answer. */
  receive(message: MeshOwnerMessage): void {
    switch (message.t) {
      case 'sites':
        return this.mirror.update(message.sites);
      case 'site-key':
        return this.setKey(message.pem);
      case 'claimed':
        return this.replay.answered(message.id, message.verdict);
    }
  }

  key(): SiteKey | undefined {
    return this.#key;
  }

  /** The site key, as the owner's mesh part loaded it (PKCS#8 PEM; never logged). */
  setKey(pem: string): void {
    this.#key = siteKeyFromPrivateKey(createPrivateKey({ key: pem, format: 'pem' }));
  }
}

/** The worker side of the mesh's crossing (core/cross-thread.ts); none without [mesh] in the config. */
export function meshWorkerSide(init: unknown, deps: WorkerMeshDeps): WorkerSide | undefined {
  return WorkerMesh.start(init as MeshInit | undefined, deps);
}

/** Kept here for the worker's side too (key-pem.ts holds it, apart from libp2p). */
export { keyPemOf } from './key-pem.ts';
