// The tenants' messages between a request worker and the owner's ledger (their half of a worker's
// link, core/cross-thread.ts): plain data, carried by src/workers/ under the tenants' name.

import type { TenantAsk, TenantDecision, TenantOutcome } from './admission-types.ts';

/** The tenants' crossing's name (the worker side of this name is started for it). */
export const TENANTS_CROSSING = 'tenants';

export type TenantWorkerMessage =
  /**
   * A request to judge by its tenant's limits (tenant-desk.ts). `answer` false: the tenant has no
   * limits, the worker goes on without waiting; the owner only counts it (admitted whatever).
   */
  | { readonly t: 'admit'; readonly id: number; readonly ask: TenantAsk; readonly answer: boolean }
  /** An admitted request ended: its reservation is settled from what it used. */
  | { readonly t: 'settle'; readonly id: number; readonly outcome: TenantOutcome };

/** The owner's ledger judged a worker's `admit` (asked with `answer`). */
export type TenantOwnerMessage = { readonly t: 'decided'; readonly id: number; readonly decision: TenantDecision };
