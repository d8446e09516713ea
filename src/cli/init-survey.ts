// Pure: what `switchyard init` learned about one URL, and the names it gives the nodes it found.

import type { NodeCapacity } from '#src/capacity/index.ts';
import type { DiscoveredModel } from '#src/discovery/index.ts';
import type { Detection } from '#src/kinds/index.ts';
import type { NodeKind } from '#src/config/index.ts';

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

/** A name given to init that resolved to several addresses: each address probed as a node would be. */
export interface NameSurvey {
  readonly url: string;
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
  /** One survey per address probed (its url is the address's). */
  readonly surveys: readonly NodeSurvey[];
  /** Addresses the name gave beyond those probed. */
  readonly unprobed: number;
}

/** The kind the recognised addresses agree on, `auto` when they differ; undefined when none was recognised. */
export function nameKind(name: NameSurvey): NodeKind | undefined {
  const kinds = new Set(name.surveys.flatMap((survey) => (survey.found ? [survey.detection.kind] : [])));
  if (kinds.size === 0) return undefined;
  return kinds.size === 1 ? [...kinds][0] : 'auto';
}

/** Node-source names (1-24 of A-Z a-z 0-9 _ -, never "static"), from the name's first label, unique among themselves. */
export function sourceNames(names: readonly NameSurvey[]): string[] {
  const taken = new Set<string>(['static']);
  return names.map((name) => {
    const label =
      (name.host.split('.')[0] ?? '')
        .toLowerCase()
        .replace(/[^a-z0-9_-]/g, '-')
        .replace(/^[-_]+/, '')
        .slice(0, 20) || 'dns';
    let chosen = label;
    for (let n = 2; taken.has(chosen); n++) chosen = `${label}-${n}`;
    taken.add(chosen);
    return chosen;
  });
}
