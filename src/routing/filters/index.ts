// The default filter pipeline, in order. Order decides which reason a node is reported under.
import type { Filter } from '../filter.ts';
import { notAlreadyTried } from './not-already-tried.ts';
import { sameGroup } from './same-group.ts';
import { notDead } from './not-dead.ts';
import { servesModel } from './serves-model.ts';
import { servesEndpoint } from './serves-endpoint.ts';
import { preferHealthy } from './prefer-healthy.ts';
import { fitsContext } from './fits-context.ts';
import { hasCapacity } from './has-capacity.ts';

export function defaultFilters(): readonly Filter[] {
  return [notAlreadyTried, sameGroup, notDead, servesModel, servesEndpoint, fitsContext, preferHealthy, hasCapacity];
}

export { notAlreadyTried, sameGroup, notDead, servesModel, servesEndpoint, fitsContext, preferHealthy, hasCapacity };
