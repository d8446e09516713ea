// Reads a V8 .cpuprofile (node --cpu-prof) and summarises where the time went: self time per
// function (samples × their time deltas) and per origin (our src/, undici, pino, prom-client,
// Node internals, GC). `node bench/profile-summary.ts FILE [TOP]` prints the markdown.

import { readFile } from 'node:fs/promises';
import { REPO_ROOT } from './processes.ts';

/** A V8 CPU profile node (the parts the summaries read). */
export interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

/** A V8 `.cpuprofile` (the parts the summaries read). */
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly where: string;
  readonly origin: string;
  readonly ms: number;
  readonly share: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  /** Time not spent idle. */
  readonly busyMs: number;
  readonly functions: readonly SelfTime[];
  readonly origins: readonly { readonly origin: string; readonly ms: number; readonly share: number }[];
}

export function originOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : 'native';
  if (url.includes('/node_modules/')) return url.split('/node_modules/').at(-1)?.split('/')[0] ?? 'node_modules';
  if (url.startsWith('node:')) return 'node internals';
  if (url.includes(`${REPO_ROOT}src/`) || url.includes('/src/')) {
    const rest = url.slice(url.lastIndexOf('/src/') + 5);
    return `src/${rest.split('/')[0]}`;
  }
  return 'other';
}

function shortUrl(url: string): string {
  if (url.includes('/node_modules/')) return url.split('/node_modules/').at(-1) ?? url;
  if (url.includes('/src/')) return `src/${url.slice(url.lastIndexOf('/src/') + 5)}`;
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(profile: CpuProfile, top: number): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const fn = new Map<string, { name: string; where: string; origin: string; us: number }>();
  const origins = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName === '' ? '(anonymous)' : functionName;
    totalUs += us;
    if (name === '(idle)') {
      idleUs += us;
      continue;
    }
    const where = url === '' ? '' : `${shortUrl(url)}:${lineNumber + 1}`;
    const key = `${name}@${where}`;
    const origin = originOf(url, name);
    const entry = fn.get(key) ?? { name, where, origin, us: 0 };
    entry.us += us;
    fn.set(key, entry);
    origins.set(origin, (origins.get(origin) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const share = (us: number): number => (busyUs > 0 ? (us / busyUs) * 100 : 0);
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    functions: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, origin: f.origin, ms: f.us / 1000, share: share(f.us) })),
    origins: [...origins.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([origin, us]) => ({ origin, ms: us / 1000, share: share(us) })),
  };
}

export function renderProfile(title: string, s: ProfileSummary): string {
  const out = [`### ${title}`, '', `Busy ${Math.round(s.busyMs)} ms of ${Math.round(s.totalMs)} ms sampled (the rest idle).`, ''];
  out.push('| origin | self ms | % of busy |', '|---|---:|---:|');
  for (const o of s.origins.slice(0, 12)) out.push(`| ${o.origin} | ${Math.round(o.ms)} | ${o.share.toFixed(1)} |`);
  out.push('', '| function | where | self ms | % of busy |', '|---|---|---:|---:|');
  for (const f of s.functions) out.push(`| \`${f.name}\` | ${f.where} | ${Math.round(f.ms)} | ${f.share.toFixed(1)} |`);
  return `${out.join('\n')}\n`;
}

export async function readProfile(file: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
}

if (import.meta.main) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node bench/profile-summary.ts FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(renderProfile(file, summarizeProfile(await readProfile(file), Number(process.argv[3] ?? 30))));
}
