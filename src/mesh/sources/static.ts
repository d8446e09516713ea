// The `static` source: `[mesh] static_models`, for backends that cannot be listed.

import type { MeshStaticModel } from '#src/mesh/config/mesh-config.ts';
import type { SiteRecordModel } from '../site-record.ts';

export function staticModels(models: readonly MeshStaticModel[]): { kind: 'list'; models: SiteRecordModel[] } {
  return {
    kind: 'list',
    models: models.map((m) => (m.ctx !== undefined && m.ctx > 0 ? { id: m.id, ctx: m.ctx } : { id: m.id })),
  };
}
