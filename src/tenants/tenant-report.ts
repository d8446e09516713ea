// What GET /admin/tenants answers (and the dashboard's Tenants view shows): per tenant its class,
// limits, usage this minute and today, what remains, in flight and queued; per model its queue by
// class and tenant. Plain data; keys appear only as keyTag() prefixes.

import type { TenantPriority } from '#src/core/tenant-class.ts';
import type { ModelQueueReport } from '#src/scheduler/index.ts';

export type { ModelQueueReport };

export interface TenantLimitsReport {
  readonly maxConcurrent: number | null;
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: number | null;
  readonly tokensPerDay: number | null;
}

export interface TenantReport {
  readonly name: string;
  readonly priority: TenantPriority;
  readonly weight: number;
  /** A short hash prefix of each key (keyTag), never a key. */
  readonly keys: readonly string[];
  readonly limits: TenantLimitsReport;
  readonly inFlight: number;
  readonly queued: number;
  /** Usage in the current minute's rate window (tokens = prompt + completion, reserved ones included). */
  readonly minute: { readonly requests: number; readonly tokens: number };
  /** Usage this UTC day (what tokens_per_day is judged by). */
  readonly today: { readonly requests: number; readonly promptTokens: number; readonly completionTokens: number };
  /** What is left before a limit answers 429; null = no such limit. */
  readonly remaining: { readonly requests: number | null; readonly tokens: number | null; readonly budget: number | null };
}

/** [cluster]: one replica as the site's report saw it (its part in the store). */
export interface ReplicaSeen {
  /** Its part was published within lease_ttl (by the store's clock); the replica answering is always live. */
  readonly live: boolean;
  /** Present (true) when its part is older than lease_ttl: its in-flight and queued counts are left out. */
  readonly expired?: true;
  readonly ageMs: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly requestsToday: number;
}

export interface TenantsReport {
  readonly tenants: readonly TenantReport[];
  readonly queues: Readonly<Record<string, ModelQueueReport>>;
  /** [cluster] only: "site" = every replica's counts summed; "replica" = this replica's alone (the store could not be read). */
  readonly scope?: 'site' | 'replica';
  /** [cluster], scope "site": every replica by name. */
  readonly replicas?: Readonly<Record<string, ReplicaSeen>>;
  /** [cluster], scope "replica": the store is unreachable, and why. */
  readonly store?: 'unreachable';
  readonly storeReason?: string;
}
