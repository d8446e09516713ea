// Presented key → tenant. Every configured key is kept only as its SHA-256 digest, in a Map keyed
// by that digest; a presented key costs one hash, one Map lookup and one timingSafeEqual, however
// many tenants and keys there are (1,000 tenants × 100 keys included).
//
// Why a digest-keyed lookup reveals nothing about the keys: the Map compares digests, not keys.
// Whatever its timing depends on (the digest's hash bucket, how many leading characters two
// digests share) is a property of the digest of the attacker's own guess, which he can compute
// himself; SHA-256's preimage resistance means a guess whose digest is "near" a stored digest is
// no nearer the key, so no timing difference can lead a search towards a key. The found entry is
// then confirmed with timingSafeEqual over the full 32 bytes (and a miss compares against a dummy
// of the same length), so a hit and a miss cost the same comparison.

import { timingSafeEqual } from 'node:crypto';
import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { keyDigestText } from './key-tag.ts';
import { tenantOf, type Tenant } from './tenant.ts';

interface Entry {
  readonly digest: Buffer;
  readonly tenant: Tenant;
}

const MISS = Buffer.alloc(32);

export class KeyDirectory {
  readonly #byDigest = new Map<string, Entry>();
  readonly #byName = new Map<string, Tenant>();
  /** The specs it was built from (a reload with equal specs keeps the directory). */
  readonly specs: readonly TenantSpec[];

  constructor(specs: readonly TenantSpec[]) {
    this.specs = specs;
    for (const spec of specs) {
      const tenant = tenantOf(spec);
      this.#byName.set(spec.name, tenant);
      for (const key of spec.keys) {
        const text = keyDigestText(key);
        this.#byDigest.set(text, { digest: Buffer.from(text, 'base64'), tenant });
      }
    }
  }

  /** No tenant configured: the gateway is open, every request is OPEN_TENANT's. */
  get open(): boolean {
    return this.#byName.size === 0;
  }

  /** The tenant holding `presented`, or undefined (no key, an unknown key). Never logs the key. */
  identify(presented: string | undefined): Tenant | undefined {
    if (presented === undefined) return undefined;
    const text = keyDigestText(presented);
    const entry = this.#byDigest.get(text);
    const matched = timingSafeEqual(entry?.digest ?? MISS, Buffer.from(text, 'base64'));
    return matched ? entry?.tenant : undefined;
  }

  /** A tenant by name (a peer site's tenant, say). */
  tenant(name: string): Tenant | undefined {
    return this.#byName.get(name);
  }

  tenants(): Iterable<Tenant> {
    return this.#byName.values();
  }
}

/** Pure: whether two tenant lists say the same (names, keys, scopes, class and limits, in order). */
export function sameTenants(a: readonly TenantSpec[], b: readonly TenantSpec[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((spec, i) => sameSpec(spec, b[i]));
}

function sameSpec(a: TenantSpec, b: TenantSpec | undefined): boolean {
  if (b === undefined) return false;
  return (
    a.name === b.name &&
    a.priority === b.priority &&
    a.weight === b.weight &&
    a.maxConcurrent === b.maxConcurrent &&
    a.requestsPerMinute === b.requestsPerMinute &&
    a.tokensPerMinute === b.tokensPerMinute &&
    a.tokensPerDay === b.tokensPerDay &&
    sameList(a.keys, b.keys) &&
    sameList(a.models, b.models) &&
    (a.sites === b.sites || (a.sites !== undefined && b.sites !== undefined && sameList(a.sites, b.sites)))
  );
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The directory for the tenants in force: rebuilt on a reload only when they changed. */
export function rotatingDirectory(tenants: () => readonly TenantSpec[]): () => KeyDirectory {
  let current = new KeyDirectory(tenants());
  let seen = current.specs;
  return () => {
    const now = tenants();
    if (now === seen) return current;
    seen = now;
    if (!sameTenants(current.specs, now)) current = new KeyDirectory(now);
    return current;
  };
}
