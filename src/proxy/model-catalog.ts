// Pure: the lookup tables the request path needs from [models] (aliases, groups, default).

import type { ModelsConfig } from '#src/config/types.ts';
import type { ModelCatalog } from './request-model.ts';

export function buildCatalog(models: ModelsConfig): ModelCatalog {
  const aliases = new Map<string, string>();
  const groups = new Map<string, string | undefined>();
  for (const model of models.available) {
    groups.set(model.name, model.group);
    for (const alias of model.aliases) aliases.set(alias, model.name);
  }
  return { defaultModel: models.default, aliases, groups };
}
