// `switchyard init URL [URL...]`: probes each server, detects its kind and writes a config that
// check-config accepts. The config goes to ./switchyard.toml (or --out FILE, or stdout with
// `--out -`), the report of what was found to stdout (stderr when the config goes there). Exit 0 when every URL was recognised, 1 when some were not (they are
// written commented out), 2 for a usage error.

import { writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { Agent } from '#src/core/undici-parts.ts';
import { formatProblems } from '#src/config/index.ts';
import { loadConfig } from '#src/config-tables.ts';
import { visibleText } from '#src/core/visible-text.js';
import { commentSafe, describeModel, renderInitConfig } from './init-config.ts';
import { parseInitArgs } from './init-args.ts';
import { INIT_USAGE } from './command-usage.ts';
import { probeUrl } from './init-probe.ts';
import { nodeNames, sourceNames, type NameSurvey, type NodeSurvey } from './init-survey.ts';
import { addressUrl, resolveUrlName } from './init-names.ts';
import type { Command } from './io.ts';

/** Bound on each answer read from a server while probing (a big router's listing fits). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** A router is asked about this many of its loaded models at most. */
const MAX_MODEL_QUESTIONS = 16;
/** Models named per node in the terminal report. */
const MODELS_REPORTED = 8;
/** Addresses of one name probed at most (the source follows every one of them once it runs). */
const MAX_ADDRESSES_PROBED = 16;

export const runInit: Command = async (argv, io) => {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout.write(INIT_USAGE);
    return 0;
  }
  const parsed = parseInitArgs(argv);
  if (!parsed.ok) {
    io.stderr.write(`switchyard init: ${parsed.message}\n\n${INIT_USAGE}`);
    return 2;
  }
  const { urls, out, force, listen, timeoutMs, resolver } = parsed.args;
  if (out !== undefined && !force && existsSync(out)) {
    io.stderr.write(`switchyard init: ${out} already exists; add --force to overwrite it\n`);
    return 1;
  }
  const dispatcher = new Agent({ connect: { timeout: timeoutMs } });
  const surveys: NodeSurvey[] = [];
  const nameSurveys: NameSurvey[] = [];
  try {
    const options = { dispatcher, timeoutMs, maxBytes: MAX_ANSWER_BYTES, maxModelQuestions: MAX_MODEL_QUESTIONS };
    // A name that resolves to several addresses is a node source: each address is probed.
    const resolved = await Promise.all(urls.map((url) => resolveUrlName(url, { timeoutMs, resolver, signal: io.signal })));
    const probed = await Promise.all(
      urls.map(async (url, index) => {
        const name = resolved[index];
        if (name === undefined || name.addresses.length === 0) return { survey: await probeUrl(url, options), name: undefined };
        // One address: a node, written by its name, asked at the address the resolver gave (--resolver's too).
        if (name.addresses.length === 1)
          return { survey: { ...(await probeUrl(addressUrl(name, name.addresses[0]!), options)), url }, name: undefined };
        const addresses = name.addresses.slice(0, MAX_ADDRESSES_PROBED);
        const each = await Promise.all(addresses.map((address) => probeUrl(addressUrl(name, address), options)));
        const { scheme, host, port } = name;
        return {
          survey: undefined,
          name: { url, scheme, host, port, surveys: each, unprobed: name.addresses.length - addresses.length },
        };
      }),
    );
    for (const one of probed) {
      if (one.name !== undefined) nameSurveys.push(one.name);
      if (one.survey !== undefined) surveys.push(one.survey);
    }
  } finally {
    await dispatcher.close();
  }
  const names = nodeNames(surveys);
  const sources = sourceNames(nameSurveys).map((name, index) => ({ survey: nameSurveys[index]!, name }));
  const text = renderInitConfig(surveys, names, { listen, names: sources, ...(resolver === undefined ? {} : { resolver }) });
  const found =
    surveys.filter((survey) => survey.found).length + nameSurveys.filter((name) => name.surveys.some((s) => s.found)).length;
  // The written file must pass check-config; a node-less one cannot, and says so below.
  const check = loadConfig(text, io.env);
  if (!check.ok && found > 0) {
    io.stderr.write(`switchyard init: the config it wrote is invalid:\n${formatProblems(check.problems)}\n`);
    return 1;
  }
  const report = out === undefined ? io.stderr : io.stdout;
  report.write(surveys.map((survey, index) => reportLines(survey, names[index] ?? '')).join(''));
  report.write(sources.map(({ survey, name }) => sourceReportLines(survey, name)).join(''));
  if (out === undefined) io.stdout.write(text);
  else {
    try {
      await writeFile(out, text, { flag: force ? 'w' : 'wx' });
    } catch (error) {
      io.stderr.write(`switchyard init: cannot write ${out}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 1;
    }
    report.write(`wrote ${out}; run it with:  switchyard serve --config ${out}\n`);
  }
  if (found === 0) report.write('no server was recognised: every node is commented out, so the config does not run yet\n');
  return found === surveys.length + nameSurveys.length ? 0 : 1;
};

function sourceReportLines(survey: NameSurvey, name: string): string {
  const count = survey.surveys.length + survey.unprobed;
  return [
    `node source ${visibleText(name)}  dns ${visibleText(survey.host)} port ${survey.port}  (${count} addresses)\n`,
    ...survey.surveys.map((address) =>
      address.found
        ? `    ${visibleText(address.url)}  ${address.detection.kind}  (${address.models.length} model${address.models.length === 1 ? '' : 's'})\n`
        : `    ${visibleText(address.url)}  not recognised: ${visibleText(address.reason)}\n`,
    ),
  ].join('');
}

function reportLines(survey: NodeSurvey, name: string): string {
  // What a server answered (its reason, its evidence) reaches the operator's terminal: made visible first.
  if (!survey.found) return `not added  ${visibleText(survey.url)}: ${visibleText(survey.reason)}\n`;
  const { kind, role, evidence } = survey.detection;
  const label = kind === 'llamacpp' && role === 'router' ? 'llamacpp (router)' : kind;
  const models = survey.models
    .slice(0, MODELS_REPORTED)
    .map((model) => `    ${commentSafe(model.id)}  ${describeModel(model)}\n`);
  const more = survey.models.length > MODELS_REPORTED ? [`    … and ${survey.models.length - MODELS_REPORTED} more\n`] : [];
  const count = `${survey.models.length} model${survey.models.length === 1 ? '' : 's'}`;
  return [
    `node ${visibleText(name)}  ${label}  ${visibleText(survey.url)}  (${visibleText(evidence)}; ${count})\n`,
    ...models,
    ...more,
  ].join('');
}
