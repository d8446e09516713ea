// GET /admin/tenants over this gateway's parts: the tenants in force, the ledger's figures, the
// scheduler's queues. Each tenant's key tags are computed once per spec (a reload that keeps a
// tenant keeps its spec, and so its tags, until it changes; 100k keys cost a hash each, once).

import type { TenantSpec } from '#src/tenants/tenants-config.ts';
import { keyTag } from './key-tag.ts';
import { tenantsReport } from './tenants-report.ts';
import type { ModelQueueReport, TenantsReport } from './tenant-report.ts';
import type { TenantFigures } from './ledger.ts';

export interface TenantsViewSources {
  readonly tenants: () => readonly TenantSpec[];
  readonly figures: (name: string) => TenantFigures | undefined;
  readonly queues: () => Readonly<Record<string, ModelQueueReport>>;
}

export class TenantsView {
  readonly #sources: TenantsViewSources;
  readonly #keyTags = new WeakMap<TenantSpec, readonly string[]>();

  constructor(sources: TenantsViewSources) {
    this.#sources = sources;
  }

  report(): TenantsReport {
    return tenantsReport(this.#sources.tenants(), this.#sources.figures, (spec) => this.#tags(spec), this.#sources.queues());
  }

  #tags(spec: TenantSpec): readonly string[] {
    let known = this.#keyTags.get(spec);
    if (known === undefined) {
      known = spec.keys.map(keyTag);
      this.#keyTags.set(spec, known);
    }
    return known;
  }
}
