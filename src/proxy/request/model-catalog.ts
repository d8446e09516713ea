// Pure: the lookup tables the request path needs from [models] (aliases, groups, default).

import type { ModelsConfig, PolicyName } from '#src/config/types.ts';
import type { ModelCatalog } from './request-model.ts';

export function buildCatalog(models: Pick<ModelsConfig, 'default' | 'available'>): ModelCatalog {
  const aliases = new Map<string, string>();
  const groups = new Map<string, string | undefined>();
  const policies = new Map<string, PolicyName>();
  for (const model of models.available) {
    groups.set(model.name, model.group);
    if (model.policy !== undefined) policies.set(model.name, model.policy);
    for (const alias of model.aliases) aliases.set(alias, model.name);
  }
  return { defaultModel: models.default, aliases, groups, policies };
}
