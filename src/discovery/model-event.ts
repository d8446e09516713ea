// Pure: one pushed model event (a router's `/models/sse` frame, read by its kind) applied to a node's
// last listing. The result is a listing as the next poll would show it, handed to the same state
// machine (discovery-state.ts, `pushed: true`); what a frame cannot say alone (a model the listing
// does not have yet, a reload of the router's model sources) asks for the listing instead.

import type { ModelEvent, ModelProgress } from '#src/kinds/index.ts';
import type { DiscoveredModel } from './discovered-model.ts';

export type PushOutcome =
  /** The listing after the event. */
  | { readonly kind: 'models'; readonly models: readonly DiscoveredModel[] }
  /** Only a fresh listing can tell (`fresh`: the router re-read its sources, an old listing will not do). */
  | { readonly kind: 'relist'; readonly fresh: boolean }
  /** The event changes nothing the listing holds. */
  | { readonly kind: 'none' };

const NONE: PushOutcome = { kind: 'none' };

export function modelsAfterEvent(models: readonly DiscoveredModel[], event: ModelEvent): PushOutcome {
  if (event.kind === 'relist') return { kind: 'relist', fresh: true };
  const index = models.findIndex((m) => m.id === event.model);
  const entry = models[index];
  if (event.kind === 'removed') {
    return entry === undefined ? NONE : { kind: 'models', models: models.filter((_, i) => i !== index) };
  }
  // A model the listing does not have (a download just started, a model added): the listing brings it, bounded.
  if (entry === undefined) return { kind: 'relist', fresh: false };
  switch (event.kind) {
    case 'status':
      return replaced(models, index, withStatus(entry, event.status, event.exitCode, event.progress));
    case 'download':
      return replaced(models, index, withStatus(entry, 'downloading', undefined, event.progress));
    case 'download_end':
      // The router marks both ends `downloaded` and drops a failed download at its next models reload.
      return event.ok
        ? replaced(models, index, withStatus(entry, 'downloaded', undefined, finished(entry.progress)))
        : { kind: 'models', models: models.filter((_, i) => i !== index) };
  }
}

/** A listing's models with the pushed progress of each model whose status the listing repeats (the listing has none). */
export function carryProgress(prev: readonly DiscoveredModel[], next: readonly DiscoveredModel[]): readonly DiscoveredModel[] {
  if (!prev.some((m) => m.progress !== undefined)) return next;
  const known = new Map(prev.filter((m) => m.progress !== undefined).map((m) => [m.id, m]));
  let changed = false;
  const carried = next.map((m) => {
    const before = known.get(m.id);
    if (before?.progress === undefined || m.progress !== undefined || before.status !== m.status) return m;
    changed = true;
    return Object.freeze({ ...m, progress: before.progress });
  });
  return changed ? carried : next;
}

function withStatus(
  entry: DiscoveredModel,
  status: string,
  exitCode: number | undefined,
  progress: ModelProgress | undefined,
): DiscoveredModel {
  // Progress belongs to one status: kept while a frame repeats it without any, dropped on a change.
  const kept = progress ?? (status === entry.status ? entry.progress : undefined);
  if (status === entry.status && exitCode === entry.exitCode && kept === entry.progress) return entry;
  const { exitCode: _exit, progress: _progress, ...rest } = entry;
  return Object.freeze({
    ...rest,
    loaded: status === 'loaded',
    status,
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(kept === undefined ? {} : { progress: kept }),
  });
}

function finished(progress: ModelProgress | undefined): ModelProgress {
  const total = progress?.totalBytes;
  return { kind: 'download', fraction: 1, ...(total === undefined ? {} : { doneBytes: total, totalBytes: total }) };
}

function replaced(models: readonly DiscoveredModel[], index: number, entry: DiscoveredModel): PushOutcome {
  if (models[index] === entry) return NONE;
  const next = [...models];
  next[index] = entry;
  return { kind: 'models', models: next };
}

/**
 * A listing asked at `askedAtMs` with each model a push changed after that kept as the push left it:
 * a listing in flight when a child crashed must not list the child loaded again until the next one.
 */
export function keepNewerPushes(
  listed: readonly DiscoveredModel[],
  current: readonly DiscoveredModel[],
  pushedAt: ReadonlyMap<string, number>,
  askedAtMs: number,
): readonly DiscoveredModel[] {
  let changed = false;
  const merged = listed.map((m) => {
    const at = pushedAt.get(m.id);
    if (at === undefined || at < askedAtMs) return m;
    const pushed = current.find((c) => c.id === m.id);
    if (pushed === undefined || pushed === m) return m;
    changed = true;
    return pushed;
  });
  return changed ? merged : listed;
}
