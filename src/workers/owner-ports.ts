// A worker's ports to the control plane, over its MessagePort to the owner: admission as a round
// trip to the owner's LeaseDesk, the fleet from the mirror the owner pushes, reports as messages
// the owner applies once. The cross-thread side of src/ports/ (one contract suite for both); a
// feature's port crosses on its own side of the link (core/cross-thread.ts, feature-sides.ts).

import type { FleetReports, FleetView } from '#src/ports/index.ts';
import type { OwnerMessage, ViewsUpdate, WorkerMessage } from './protocol.ts';
import { RemoteAdmission } from './remote-admission.ts';
import { ViewMirror } from './view-mirror.ts';

/** How long a worker waits for the owner's word on an answer's node (then: none known). */
export const ASK_OWNER_TIMEOUT_MS = 5_000;
/** The waits before a miss is asked again (a report from another worker still in flight). */
export const ASK_OWNER_RETRY_MS: readonly number[] = [20, 60, 200];

export interface OwnerPorts {
  readonly admission: RemoteAdmission;
  /** The one memory of owners, asked of the owner thread. */
  readonly answerOwner: (tenant: string, answerId: string) => Promise<string | undefined>;
  readonly fleet: FleetView;
  readonly reports: FleetReports;
  /** Takes the owner's messages these ports answer to (admissions, the fleet); false for any other. */
  receive(message: OwnerMessage): boolean;
}

export function ownerPorts(fleet: ViewsUpdate, send: (message: WorkerMessage) => void, now: () => number): OwnerPorts {
  const mirror = new ViewMirror(fleet, now);
  const admission = new RemoteAdmission(send, mirror);
  const asked = new Map<number, (node: string | undefined) => void>();
  const sequence = { next: 1 };
  const askOnce = (tenant: string, answerId: string): Promise<string | undefined> =>
    new Promise((resolve) => {
      const id = sequence.next++;
      const timer = setTimeout(() => {
        asked.delete(id);
        resolve(undefined);
      }, ASK_OWNER_TIMEOUT_MS);
      timer.unref();
      asked.set(id, (node) => {
        clearTimeout(timer);
        asked.delete(id);
        resolve(node);
      });
      send({ t: 'ask-owner', id, tenant, answerId });
    });
  // Another worker's report of the answer may still be on its way to the owner (it is sent as the
  // answer ends, the client may ask at once over another connection): a miss is asked again, a
  // bounded number of times, before it reads as none known. A hit costs one round trip.
  const answerOwner = async (tenant: string, answerId: string): Promise<string | undefined> => {
    for (const waitMs of ASK_OWNER_RETRY_MS) {
      const node = await askOnce(tenant, answerId);
      if (node !== undefined) return node;
      await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
    }
    return askOnce(tenant, answerId);
  };
  return {
    admission,
    answerOwner,
    fleet: mirror,
    reports: {
      learnContext: (node, url, model, nCtx) => send({ t: 'learn', node, url, model, nCtx }),
      learnTokenRatio: (node, url, model, sample) => send({ t: 'learn-ratio', node, url, model, sample }),
      learnDecodeRate: (node, url, model, sample) => send({ t: 'learn-decode', node, url, model, sample }),
      modelVanished: (node) => send({ t: 'vanished', node }),
      learnLackingEndpoint: (node, url, endpoint, said) => send({ t: 'learn-endpoint', node, url, endpoint, said }),
      learnAnswerNode: (tenant, answerId, node) => send({ t: 'learn-answer', tenant, answerId, node }),
    },
    receive(message) {
      switch (message.t) {
        case 'admitted':
        case 'refused':
          admission.decided(message);
          return true;
        case 'fleet':
          mirror.update(message.fleet);
          return true;
        case 'views':
          mirror.replaceViews(message.changed, message.rooms);
          return true;
        case 'rooms':
          mirror.updateRooms(message.rooms);
          return true;
        case 'answer-owner':
          asked.get(message.id)?.(message.node);
          return true;
        default:
          return false;
      }
    },
  };
}
