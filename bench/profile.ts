// `npm run bench -- --profile`: where the gateway spends its CPU under load. For each workload a
// fresh gateway runs with `node --cpu-prof` at concurrency 64; on exit V8 writes the profile,
// summarised into bench/results/profile-latest.md (self time by function and by origin, then the
// flame view: inclusive time and the hottest stacks, bench/flame.ts), with each profile's folded
// stacks in bench/results/profile-<name>.folded for flamegraph.pl or speedscope. Then the control
// plane: a gateway polling 1,000 nodes every 2 s, profiled for 20 s.

import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, type LoadTool } from './load.ts';
import { readProfile, renderProfile, summarizeProfile } from './profile-summary.ts';
import { flameOf, renderFlame } from './flame.ts';
import { controlPlaneConfig } from './control-plane.ts';
import { proxyGatewayConfig, REPO_ROOT, sleepMs, startGateway, startNodeScript } from './processes.ts';
import type { Workload, WorkloadName } from './workloads.ts';

export interface ProfileOptions {
  readonly tool: LoadTool;
  readonly list: readonly Workload[];
  readonly bodyFiles: ReadonlyMap<WorkloadName, string>;
  readonly durationS: number;
  readonly log: (line: string) => void;
}

const CONNECTIONS = 64;

export async function runProfile(options: ProfileOptions): Promise<void> {
  const upstream = await startNodeScript('bench/upstream.ts');
  const sections: string[] = [];
  try {
    const upstreamUrl = String(upstream.ready.url);
    for (const workload of options.list) {
      const bodyFile = options.bodyFiles.get(workload.name);
      if (bodyFile === undefined) continue;
      const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-prof-'));
      try {
        const gateway = await startGateway(proxyGatewayConfig(upstreamUrl), {
          nodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '500'],
        });
        const url = new URL(workload.path, gateway.url).toString();
        const spec = { url, bodyFile, connections: CONNECTIONS };
        await runLoad(options.tool, { ...spec, durationS: 1 });
        const load = await runLoad(options.tool, { ...spec, durationS: options.durationS });
        await gateway.stop();
        const file = await gatewayProfile(dir);
        const title = `${workload.title}, c=${CONNECTIONS}, ${Math.round(load.requestsPerSecond)} req/s under the profiler`;
        sections.push(await summarizeFile(join(dir, file), title, workload.name, options));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await upstream.stop();
  }
  sections.push(await profileControlPlane(options));
  const page = [
    `# Gateway CPU profile — ${new Date().toISOString()}`,
    '',
    `\`node --cpu-prof\` (500 µs sampling) on \`switchyard serve\`, load from ${options.tool}, ${options.durationS} s per workload ` +
      'after 1 s of warm-up (the warm-up is in the profile too). Self time: time in the function itself, not its callees.',
    '',
    ...sections,
  ].join('\n');
  await writeFile(join(REPO_ROOT, 'bench/results/profile-latest.md'), page);
  options.log('wrote bench/results/profile-latest.md');
  process.stdout.write(page);
}

async function profileControlPlane(options: ProfileOptions): Promise<string> {
  const fleet = await startNodeScript('bench/fleet-server.ts', ['--nodes', '1000', '--models', '50']);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-prof-'));
  try {
    const urls = (fleet.ready.urls as unknown[] | undefined)?.map(String) ?? [];
    const gateway = await startGateway(controlPlaneConfig(urls, 2), {
      nodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '500'],
    });
    await sleepMs(20_000);
    await gateway.stop();
    const file = await gatewayProfile(dir);
    return await summarizeFile(
      join(dir, file),
      'Control plane: 1,000 nodes × 50 models, health and discovery every 2 s, 20 s from start',
      'control',
      options,
    );
  } finally {
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Self time, then the flame view; the folded stacks go to bench/results/profile-<name>.folded. */
async function summarizeFile(file: string, title: string, name: string, options: ProfileOptions): Promise<string> {
  const profile = await readProfile(file);
  const summary = summarizeProfile(profile, 30);
  const flame = flameOf(profile);
  await writeFile(join(REPO_ROOT, `bench/results/profile-${name}.folded`), `${flame.folded}\n`);
  options.log(`profiled ${name}: busy ${Math.round(summary.busyMs)} ms (folded stacks: bench/results/profile-${name}.folded)`);
  return `${renderProfile(title, summary)}\n${renderFlame(flame)}`;
}

/**
 * The gateway's profile in `dir`: the largest one. (An older bin/switchyard.js, run with --root,
 * replaced itself once to set its heap flags, and `--cpu-prof` wrote a tiny profile for that first image too.)
 */
async function gatewayProfile(dir: string): Promise<string> {
  let best: { file: string; size: number } | undefined;
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.cpuprofile')) continue;
    const { size } = await stat(join(dir, file));
    if (best === undefined || size > best.size) best = { file, size };
  }
  if (best === undefined) throw new Error('the gateway wrote no .cpuprofile');
  return best.file;
}
