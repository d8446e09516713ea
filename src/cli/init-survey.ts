// Pure: what `switchyard init` learned about one URL, and the names it gives the nodes it found.

import type { NodeCapacity } from '#src/capacity/index.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import type { Detection } from '#src/kinds/index.ts';

export interface SurveyedModel {
  readonly id: string;
  /** Loaded now; false = the node would load it on demand. */
  readonly loaded: boolean;
  /** Per-request context, when the node told it. */
  readonly ctx: number | undefined;
  readonly slots: number | undefined;
}

export type NodeSurvey =
  | { readonly url: string; readonly found: true; readonly detection: Detection; readonly models: readonly SurveyedModel[] }
  | { readonly url: string; readonly found: false; readonly reason: string };

/** The listing's models with the figures the capacity answer adds (its own first, then the host's). */
export function surveyedModels(models: readonly DiscoveredModel[], capacity: NodeCapacity): SurveyedModel[] {
  const loadedIds = capacity.loadedIds === undefined ? undefined : new Set(capacity.loadedIds);
  return models.map((model) => {
    const figures = capacity.models[model.id] ?? capacity.host;
    return {
      id: model.id,
      loaded: loadedIds === undefined ? model.loaded : loadedIds.has(model.id),
      ctx: figures?.nCtx ?? model.contextTokens,
      slots: figures?.slots,
    };
  });
}

/** What a node's name starts from: its kind (a router says so), or its host when that is a name. */
function baseName(survey: NodeSurvey): string {
  const host = new URL(survey.url).hostname;
  const isAddress = /^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[') || host === 'localhost';
  if (!isAddress) {
    const label = (host.split('.')[0] ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, '-')
      .replace(/^-+/, '')
      .slice(0, 48);
    if (label !== '') return label;
  }
  if (!survey.found) return 'node';
  const { kind, role } = survey.detection;
  return kind === 'llamacpp' && role === 'router' ? 'llamacpp-router' : kind;
}

/** One unique name per survey, in order: the base name, then `-2`, `-3`… for the ones after it. */
export function nodeNames(surveys: readonly NodeSurvey[]): string[] {
  const taken = new Set<string>();
  return surveys.map((survey) => {
    const base = baseName(survey);
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}-${n}`;
    taken.add(name);
    return name;
  });
}
