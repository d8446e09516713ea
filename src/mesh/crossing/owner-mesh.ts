// The owner's side of the mesh's crossing to the request workers ([mesh] with `[server] workers` >
// 1; core/cross-thread.ts): the owner's mesh feature holds the site store, the key and the one
// memory of accepted forwards. Each worker starts with the state last sent; the site key is sent
// once loaded and the remote sites whenever their views change (asked on every sync); each
// worker's replay claims are answered from the one memory (fail closed when the check fails).

import type { OwnerSide } from '#src/core/cross-thread.ts';
import type { RemoteSiteView } from '#src/routing/index.ts';
import type { ClaimVerdict, ForwardClaim, ReplayOp } from '../forwarding/index.ts';
import type { SiteKey } from '../site-key.ts';
import { keyPemOf } from './key-pem.ts';
import { MESH_CROSSING, type MeshInit, type MeshOwnerMessage, type MeshWorkerMessage } from './mesh-messages.ts';
import { sitesSignature, sitesToWire } from './site-mirror.ts';

/** What the owner's mesh feature offers the workers. */
export interface WorkersMeshSource {
  /** The site key, once the mesh feature has loaded it. */
  key(): SiteKey | undefined;
  /** Every pinned remote site, fresh or stale. */
  sites(): readonly RemoteSiteView[];
  /** Holds, uses or releases a forwarded request's signature: one memory for every worker. */
  claimForward(claim: ForwardClaim, op: ReplayOp): ClaimVerdict | Promise<ClaimVerdict>;
}

const CHECK_FAILED: ClaimVerdict = {
  ok: false,
  rejection: 'replay_unavailable',
  detail: 'the replay check failed',
  retryAfterSeconds: 1,
};

export function meshOwnerSide(source: WorkersMeshSource): OwnerSide {
  const last: { keyPem: string | undefined; sites: MeshInit['sites']; signature: string } = {
    keyPem: undefined,
    sites: [],
    signature: '[]',
  };
  /** Brings `last` up to date with the mesh feature; says what changed. */
  const changes = (): MeshOwnerMessage[] => {
    const changed: MeshOwnerMessage[] = [];
    if (last.keyPem === undefined) {
      const pem = keyPemOf(source.key());
      if (pem !== undefined) changed.push({ t: 'site-key', pem });
      last.keyPem = pem;
    }
    const sites = sitesToWire(source.sites());
    const signature = sitesSignature(sites);
    if (signature !== last.signature) {
      changed.push({ t: 'sites', sites });
      last.sites = sites;
      last.signature = signature;
    }
    return changed;
  };
  changes();
  return {
    name: MESH_CROSSING,
    init: (): MeshInit => ({ keyPem: last.keyPem, sites: last.sites }),
    changes,
    link: (send, failed) => ({
      receive: (raw) => {
        const { id, claim, op } = raw as MeshWorkerMessage;
        const answer = (verdict: ClaimVerdict): void => send({ t: 'claimed', id, verdict } satisfies MeshOwnerMessage);
        Promise.resolve(source.claimForward(claim, op)).then(answer, (error: unknown) => {
          failed(error, 'a replay check failed');
          answer(CHECK_FAILED);
        });
      },
      close: () => {},
    }),
  };
}
