// A worker's replay guard ([mesh] with `[server] workers` > 1): a forwarded request's signature is
// good once across the whole gateway, and a replay on another connection may reach another
// thread — so each signature is held (at its head), used (once admitted) or released by the owner
// thread, which holds the one memory (../forwarding/seen-forwards.ts); each step there is atomic.
// One message there, one back; an answer that does not come within CLAIM_TIMEOUT_MS refuses the
// forward (fail closed: it may be retried).

import type { Clock } from '#src/core/clock.ts';
import type { ClaimVerdict, ForwardClaim, ReplayGuard, ReplayOp } from '../forwarding/index.ts';
import type { MeshWorkerMessage } from './mesh-messages.ts';

export const CLAIM_TIMEOUT_MS = 5_000;

export class OwnerReplayGuard implements ReplayGuard {
  readonly #send: (message: MeshWorkerMessage) => void;
  readonly #clock: Clock;
  readonly #asking = new Map<number, (verdict: ClaimVerdict) => void>();
  #nextId = 0;

  constructor(send: (message: MeshWorkerMessage) => void, clock: Clock) {
    this.#send = send;
    this.#clock = clock;
  }

  hold(claim: ForwardClaim): Promise<ClaimVerdict> {
    return this.#ask(claim, 'hold');
  }

  claim(claim: ForwardClaim): Promise<ClaimVerdict> {
    return this.#ask(claim, 'claim');
  }

  release(claim: ForwardClaim): void {
    void this.#ask(claim, 'release');
  }

  #ask(claim: ForwardClaim, op: ReplayOp): Promise<ClaimVerdict> {
    this.#nextId += 1;
    const id = this.#nextId;
    return new Promise<ClaimVerdict>((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#asking.delete(id);
        resolve({
          ok: false,
          rejection: 'replay_unavailable',
          detail: `the gateway's replay memory did not answer within ${CLAIM_TIMEOUT_MS} ms`,
          retryAfterSeconds: 1,
        });
      }, CLAIM_TIMEOUT_MS);
      this.#asking.set(id, (verdict) => {
        timer.cancel();
        resolve(verdict);
      });
      this.#send({ t: 'claim', id, claim, op });
    });
  }

  /** The owner's answer to a claim. */
  answered(id: number, verdict: ClaimVerdict): void {
    const resolve = this.#asking.get(id);
    this.#asking.delete(id);
    resolve?.(verdict);
  }

  /** Claims still waiting for the owner. */
  pending(): number {
    return this.#asking.size;
  }
}
