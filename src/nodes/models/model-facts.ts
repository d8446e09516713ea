// Pure: a node's view brought to the plain facts the model decision reads (model-decision.ts).

import { residencyOf } from '#src/capacity/index.ts';
import { entryHold, isKnownStatus, serverKind } from '#src/kinds/index.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import type { NodeView } from '../node.ts';
import { servingNow } from '../serving-now.ts';
import type { ModelStateNote, NodeFacts } from './model-decision.ts';

/** The statuses a model row needs no note for. */
const PLAIN: ReadonlySet<string | undefined> = new Set([undefined, 'loaded', 'unloaded']);

/** A listed model's status worth showing in /admin/models (sleeping, loading with progress, downloading, failed, unknown). */
export function modelStateNote(model: DiscoveredModel | undefined): ModelStateNote | undefined {
  if (model === undefined || (PLAIN.has(model.status) && model.exitCode === undefined)) return undefined;
  if (model.status === 'loading' && model.progress === undefined) return undefined;
  const hold = entryHold(model);
  return {
    status: model.status ?? 'unknown',
    ...(model.exitCode === undefined ? {} : { exitCode: model.exitCode }),
    ...(model.progress?.fraction === undefined ? {} : { fraction: model.progress.fraction }),
    ...(hold === undefined ? {} : { hold: hold.detail }),
    unknown: !isKnownStatus(model.status),
  };
}

/** Why a node cannot be asked to load or unload now; undefined = it can. */
export function unavailability(view: NodeView): string | undefined {
  if (view.health.status === 'asleep') return 'asleep (wake it first: POST /admin/wake)';
  if (view.health.status === 'dead') return `dead (${view.health.lastError ?? 'its health probe fails'})`;
  if (view.discovery.phase === 'untried') return 'not discovered yet';
  return undefined;
}

export function nodeFacts(view: NodeView, inFlight: (node: string, model: string) => number, busy: boolean): NodeFacts {
  const name = view.spec.name;
  const max = view.capacity.role === 'router' ? view.capacity.router?.maxInstances : undefined;
  const models = [...view.modelsById.keys()].map((id) => {
    const residency = residencyOf(view, id);
    const running =
      residency.state === 'loaded' ||
      (residency.state === 'on_demand' && (residency.status === 'loading' || residency.status === 'sleeping'));
    const state = modelStateNote(view.modelsById.get(id));
    return {
      id,
      running,
      serving: servingNow(view, id) !== undefined,
      inFlight: inFlight(name, id),
      ...(state === undefined ? {} : { state }),
    };
  });
  return {
    name,
    unavailable: unavailability(view),
    canManage: serverKind(view.spec.kind).modelOps(view.capacity.role) !== undefined,
    busy,
    maxInstances: max !== undefined && max > 0 ? max : undefined,
    models,
    listedAt: view.discovery.lastSuccessAt,
  };
}
