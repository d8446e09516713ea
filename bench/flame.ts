// The flame-graph view of a V8 .cpuprofile: where time goes including callees. Two parts:
// - inclusive ("total") time per function: a function's own time plus everything it called,
//   counted once per sample even when it recurses;
// - the hottest call stacks, root to leaf, by the self time at their leaf;
// and the whole profile as folded stacks ("a;b;c 123", one line per stack, µs), the input of
// flamegraph.pl, speedscope and inferno. `node bench/flame.ts FILE.cpuprofile [OUT.folded]`.

import { writeFile } from 'node:fs/promises';
import { readProfile, type CpuProfile, type ProfileNode } from './profile-summary.ts';

type FlameNode = ProfileNode;
type FlameProfile = CpuProfile;

export interface Flame {
  readonly busyMs: number;
  /** Function → inclusive µs, highest first. */
  readonly inclusive: readonly { readonly frame: string; readonly ms: number; readonly share: number }[];
  /** Stacks (root → leaf) → µs at their leaf, highest first. */
  readonly stacks: readonly { readonly frames: readonly string[]; readonly ms: number; readonly share: number }[];
  /** Every stack, folded: "frame;frame;frame µs". */
  readonly folded: string;
}

const SKIPPED = new Set(['(root)', '(program)', '(idle)']);

function frameOf(node: FlameNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName === '' ? '(anonymous)' : functionName;
  if (url === '') return name;
  const short = url.includes('/node_modules/')
    ? url.split('/node_modules/').at(-1)
    : url.includes('/src/')
      ? `src/${url.slice(url.lastIndexOf('/src/') + 5)}`
      : url.replace(/^file:\/\//, '');
  return `${name} ${short}:${lineNumber + 1}`;
}

export function flameOf(profile: FlameProfile, top = 20): Flame {
  const parent = new Map<number, number>();
  const byId = new Map<number, FlameNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const inclusive = new Map<string, number>();
  const stacks = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const leaf = byId.get(id);
    if (leaf === undefined || SKIPPED.has(leaf.callFrame.functionName) || us <= 0) continue;
    busyUs += us;
    const frames: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node !== undefined && node.callFrame.functionName !== '(root)') frames.push(frameOf(node));
    }
    frames.reverse();
    for (const frame of new Set(frames)) inclusive.set(frame, (inclusive.get(frame) ?? 0) + us);
    const key = frames.join(';');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  const share = (us: number): number => (busyUs > 0 ? (us / busyUs) * 100 : 0);
  return {
    busyMs: busyUs / 1000,
    inclusive: [...inclusive]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, ms: us / 1000, share: share(us) })),
    stacks: [...stacks]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => ({ frames: key.split(';'), ms: us / 1000, share: share(us) })),
    folded: [...stacks].map(([key, us]) => `${key.replaceAll(' ', '_')} ${Math.round(us)}`).join('\n'),
  };
}

/** Markdown: inclusive time per function, then the hottest stacks (their last frames). */
export function renderFlame(flame: Flame, depth = 6): string {
  const out = ['#### Inclusive time (own + callees)', '', '| function | total ms | % of busy |', '|---|---:|---:|'];
  for (const f of flame.inclusive) out.push(`| \`${f.frame}\` | ${Math.round(f.ms)} | ${f.share.toFixed(1)} |`);
  out.push(
    '',
    `#### Hottest stacks (leaf last; the ${depth} innermost frames)`,
    '',
    '| stack | ms | % of busy |',
    '|---|---:|---:|',
  );
  for (const s of flame.stacks) {
    const shown = s.frames
      .slice(-depth)
      .map((f) => f.split(' ')[0])
      .join(' → ');
    out.push(`| ${s.frames.length > depth ? '… → ' : ''}${shown} | ${Math.round(s.ms)} | ${s.share.toFixed(1)} |`);
  }
  return `${out.join('\n')}\n`;
}

if (import.meta.main) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: node bench/flame.ts FILE.cpuprofile [OUT.folded]\n');
    process.exit(2);
  }
  const flame = flameOf(await readProfile(file));
  if (process.argv[3] !== undefined) await writeFile(process.argv[3], `${flame.folded}\n`);
  process.stdout.write(renderFlame(flame));
}
