// A worker's way to admit a request: ask the owner, whose Scheduler alone routes, leases and
// queues (one message there, one back: ~15 µs, see docs/performance.md), and turn its answer
// into the same Admission the in-thread scheduler gives. Releasing the lease and settling a load
// are messages back. Whether a failover has another node to try is decided here, over the mirror,
// by the scheduler's own pipeline (router-room fed by the rooms the owner pushes).

import {
  alternativeFilters,
  defaultFilters,
  hasAlternativeIn,
  withRouterRoom,
  type Exclusion,
  type Filter,
  type RouteRequest,
} from '#src/routing/index.ts';
import type { Admission, QueueSettings } from '#src/scheduler/index.ts';
import type { AdmissionPort } from '#src/ports/index.ts';
import { queueSettingsOf, type OwnerMessage, type WorkerMessage } from './protocol.ts';
import type { ViewMirror } from './view-mirror.ts';

type Decided = Extract<OwnerMessage, { t: 'admitted' } | { t: 'refused' }>;

interface Asking {
  readonly resolve: (admission: Admission) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
}

export class RemoteAdmission implements AdmissionPort {
  readonly #send: (message: WorkerMessage) => void;
  readonly #mirror: ViewMirror;
  /** The owner's pipeline (the gateway's filters, router-room over the mirrored rooms) without has-capacity. */
  readonly #alternativeFilters: readonly Filter[];
  readonly #asking = new Map<number, Asking>();
  #nextId = 0;

  constructor(send: (message: WorkerMessage) => void, mirror: ViewMirror) {
    this.#send = send;
    this.#mirror = mirror;
    this.#alternativeFilters = alternativeFilters(withRouterRoom(defaultFilters(), (node) => mirror.switchView(node)));
  }

  admit(req: RouteRequest, settings: QueueSettings, signal: AbortSignal, firstAttempt: boolean): Promise<Admission> {
    this.#nextId += 1;
    const id = this.#nextId;
    return new Promise<Admission>((resolve) => {
      // The owner drops the request from its queue; if it was admitted meanwhile, its answer still
      // comes, and the request path releases the lease as for any client that left.
      const onAbort = (): void => this.#send({ t: 'abort', id });
      this.#asking.set(id, { resolve, signal, onAbort });
      this.#send({ t: 'admit', id, req, settings: queueSettingsOf(settings), firstAttempt });
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** The owner's answer to an admit. */
  decided(message: Decided): void {
    const asking = this.#asking.get(message.id);
    if (asking === undefined) return;
    this.#asking.delete(message.id);
    asking.signal.removeEventListener('abort', asking.onAbort);
    asking.resolve(this.#admission(message));
  }

  /** Admissions still being decided by the owner. */
  pending(): number {
    return this.#asking.size;
  }

  hasAlternative(req: RouteRequest): boolean {
    return hasAlternativeIn(req, this.#mirror.snapshot(), this.#alternativeFilters);
  }

  #admission(message: Decided): Admission {
    const { id, waitedMs } = message;
    if (message.t === 'refused') return { kind: 'refused', reason: message.reason, excluded: message.excluded, waitedMs };
    const node = this.#mirror.view(message.node);
    if (node === undefined) {
      // The owner pushes the fleet before it answers, so this is a node removed in between: give the lease back.
      this.#send({ t: 'release', id });
      const gone: Exclusion = {
        node: message.node,
        filter: 'lease-owner',
        code: 'missing',
        detail: 'the node was removed while the request was admitted',
      };
      return { kind: 'refused', reason: 'unavailable', excluded: [gone], waitedMs };
    }
    let released = false;
    let settled = false;
    const { loadTimeoutMs } = message;
    return {
      kind: 'admitted',
      node,
      route: message.route,
      waitedMs,
      load:
        loadTimeoutMs === undefined
          ? undefined
          : {
              timeoutMs: loadTimeoutMs,
              settle: (outcome) => {
                if (settled) return;
                settled = true;
                this.#send({ t: 'settle', id, outcome });
              },
            },
      release: () => {
        if (released) return;
        released = true;
        this.#send({ t: 'release', id });
      },
    };
  }
}
