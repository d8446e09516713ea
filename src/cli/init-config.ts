// Pure: the config `switchyard init` writes. Each node found becomes a [[nodes]] table with the
// models and contexts it reported beside it, in comments; a URL that answered like none of the kinds is
// written commented out with the reason. Everything a node told us (model ids) is untrusted, so it
// only ever lands in a comment, made safe first; values are TOML-escaped.

import { visibleText } from '#src/core/visible-text.js';
import { nameKind, type NameSurvey, type NodeSurvey, type SurveyedModel } from './init-survey.ts';

export interface InitConfigOptions {
  /** `[server] listen`, "host:port". */
  readonly listen: string;
  /** Names that resolved to several addresses, each a DNS node source, with their source names. */
  readonly names?: readonly { readonly survey: NameSurvey; readonly name: string }[];
  /** `--resolver`: the DNS server those sources ask. */
  readonly resolver?: { readonly host: string; readonly port: number };
}

/** Models listed per node in the comments; the rest are counted. */
const MODELS_SHOWN = 20;
/** Longest model id shown in a comment. */
const ID_CHARS = 80;

export function renderInitConfig(surveys: readonly NodeSurvey[], names: readonly string[], options: InitConfigOptions): string {
  const header = [
    '# Switchyard config written by `switchyard init`.',
    '# Check it:  switchyard check-config FILE      Run it:  switchyard serve --config FILE',
    '# Only the keys below are set; every other one has its default (docs/config.md,',
    '# examples/switchyard.toml). The models listed beside each node are what it served when probed;',
    '# the gateway keeps discovering them on its own.',
    '',
    '[server]',
    '# Where the gateway listens; "0.0.0.0:8080" accepts remote clients.',
    `listen = ${tomlString(options.listen)}`,
  ];
  const nodes = surveys.map((survey, index) => nodeBlock(survey, names[index] ?? `node-${index + 1}`));
  const sources = (options.names ?? []).map(({ survey, name }) => sourceBlock(survey, name, options.resolver));
  return `${[header.join('\n'), ...nodes, ...sources].join('\n\n')}\n`;
}

/**
 * A name of several servers: a `[[node_sources]] kind = "dns"` entry (commented out when no address
 * was recognised), with what each address answered beside it.
 */
function sourceBlock(survey: NameSurvey, name: string, resolver: InitConfigOptions['resolver']): string {
  const kind = nameKind(survey);
  const count = survey.surveys.length + survey.unprobed;
  const lines = [
    `# ${commentSafe(survey.host)} resolves to ${count} addresses: a DNS node source follows the name (addresses it`,
    '# gains are discovered and served, addresses it loses are drained; docs/deploy.md, "Nodes from DNS").',
    ...survey.surveys.flatMap((address) =>
      address.found
        ? [`#   ${commentSafe(address.url)}  ${kindWords(address)}`, ...modelLines(address.models).map((l) => `  ${l}`)]
        : [`#   ${commentSafe(address.url)}  not recognised: ${commentSafe(address.reason)}`],
    ),
    ...(survey.unprobed > 0 ? [`#   … and ${survey.unprobed} more addresses, not probed`] : []),
  ];
  const entry = [
    '[[node_sources]]',
    'kind = "dns"',
    `name = ${tomlString(name)}`,
    `host = ${tomlString(survey.host)}`,
    `port = ${survey.port}`,
    `node_kind = ${tomlString(kind ?? 'auto')}`,
    ...(survey.scheme === 'https' ? ['scheme = "https"'] : []),
    ...(resolver === undefined
      ? []
      : [`resolver = ${tomlString(`${resolver.host.includes(':') ? `[${resolver.host}]` : resolver.host}:${resolver.port}`)}`]),
  ];
  if (kind !== undefined) return [...lines, ...entry].join('\n');
  return [
    ...lines,
    '# Uncomment it once a server there answers (kind "auto" tells the kinds apart by their answers):',
    ...entry.map((l) => `# ${l}`),
  ].join('\n');
}

function kindWords(survey: NodeSurvey & { found: true }): string {
  const { kind, role, evidence } = survey.detection;
  const what = kind === 'llamacpp' ? (role === 'router' ? 'llama.cpp router' : 'llama.cpp server') : kind;
  return `${what} (${commentSafe(evidence)})`;
}

function nodeBlock(survey: NodeSurvey, name: string): string {
  if (!survey.found) {
    return [
      `# ${commentSafe(survey.url)}: ${commentSafe(survey.reason)}.`,
      '# Uncomment this node once the server answers (kind "auto" tells the kinds apart by their answers):',
      '# [[nodes]]',
      `# name = ${tomlString(name)}`,
      `# url = ${tomlString(survey.url)}`,
      '# kind = "auto"',
    ].join('\n');
  }
  const { kind, role, evidence } = survey.detection;
  const what = kind === 'llamacpp' ? (role === 'router' ? 'llama.cpp router' : 'llama.cpp server') : kind;
  return [
    `# ${what} (${commentSafe(evidence)})`,
    ...modelLines(survey.models),
    '[[nodes]]',
    `name = ${tomlString(name)}`,
    `url = ${tomlString(survey.url)}`,
    `kind = ${tomlString(kind)}`,
  ].join('\n');
}

function modelLines(models: readonly SurveyedModel[]): string[] {
  if (models.length === 0) return ['#   no models listed yet'];
  const shown = models.slice(0, MODELS_SHOWN);
  const width = Math.max(...shown.map((model) => commentSafe(model.id).length));
  const lines = shown.map((model) => `#   ${commentSafe(model.id).padEnd(width)}  ${describeModel(model)}`);
  if (models.length > shown.length) lines.push(`#   … and ${models.length - shown.length} more`);
  return lines;
}

/** "loaded, ctx 8192, 4 slots" / "on demand, ctx unknown until loaded". */
export function describeModel(model: SurveyedModel): string {
  const state = model.loaded ? 'loaded' : 'on demand';
  const ctx = model.ctx === undefined ? (model.loaded ? 'ctx unknown' : 'ctx unknown until loaded') : `ctx ${model.ctx}`;
  const slots = model.slots === undefined ? '' : `, ${model.slots} slot${model.slots === 1 ? '' : 's'}`;
  return `${state}, ${ctx}${slots}`;
}

/**
 * One line of comment text, safe on a terminal too: no control characters (a newline would end
 * the comment; ESC and C1 would reach the terminal of whoever reads it), cut short.
 */
export function commentSafe(text: string): string {
  // TOML allows no control character but tab in a comment; a model id is the node's to choose.
  const clean = visibleText(text);
  return clean.length > ID_CHARS ? `${clean.slice(0, ID_CHARS - 1)}…` : clean;
}

/** A TOML basic string. */
export function tomlString(text: string): string {
  const escaped = text.replace(/[\\"\u0000-\u001f\u007f]/g, (char) =>
    char === '\\' || char === '"' ? `\\${char}` : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}
