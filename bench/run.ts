// `npm run bench [-- flags]`: the whole benchmark of issue 7 in one run, under 5 minutes.
//   1. proxy: a zero-think-time upstream measured direct, through Switchyard and through nginx
//      (when installed), alternating, for each workload × concurrency; SSE time to first chunk;
//   2. the routing decision at 10, 100, 1,000 nodes × 50 models, and per model count (own process);
//   3. the control plane: a gateway polling 1,000 nodes every 2 s.
// Writes bench/results/latest.json and latest.md and prints the markdown.
//
// Flags: --duration S (3) --warmup S (1) --rounds N (2) --wait-quiet S (20) --tool wrk|autocannon --only proxy,route,control
//        --install-peers (apt-get install nginx haproxy wrk; npm-install Portkey into a scratch folder) --no-write --profile (see bench/profile.ts)
//        --only side: issue 42's side-by-side rows (a 22 ms upstream, c = 1/4/16/64, added p50/p99 of Switchyard, the bare
//          proxy, nginx, HAProxy and Portkey; bench/side-by-side.ts), checked in the targets table (bench/targets-42.ts)
//        --candidate DIR (also measure DIR's gateway: a change against this one, in the same run)
//        --candidate-flags=... (node flags for the candidate only; without --candidate: this checkout)
//        --gateway-flags=... (node flags for the gateway processes; values starting with - need the = form)
//        --mesh [--sites 32 --heartbeat 2s --measure 10]: the federation benchmark instead (bench/mesh.ts)
//        --workers N (2: also `[server] workers = N` against nginx `worker_processes N`, and the workers
//        projection, bench/workers-projection.ts; 1 skips them)
//        --candidate-log (the candidate runs with `[log] requests = FILE`: the request log's cost, against the same run without it)
//        --only streams [--streams N] (10,000): the ten-thousand-streams workload (bench/streams-10k.ts; long, not in the default list)
//        --only soak [--soak-minutes N] (10): the soak, the gateway's RSS under a steady mixed load (bench/soak.ts; not in the default list)
//        --only footprint: issue 39's footprint of one plain request (files, functions, promises, KB; bench/footprint-report.ts),
//          with --candidate DIR also the candidate's; written to bench/results/footprint-latest.* (and latest.* in a fuller run)
//        --only sessions: issue 40's agent sessions (8 x 20 turns at c=8 on 3 llama.cpp sims with prompt-cache timing: time to
//          first token with sessions kept against a round-robin control; bench/agent-sessions.ts), to bench/results/sessions-latest.*
//        --only batch [--batch-lines N] (10000) [--batch-measure S] (10): issue 44's batch in spare capacity (interactive time to
//          first token with and without a batch running, the batch's lines per second alone; bench/batch-yield.ts; not in the
//          default list), to bench/results/batch-latest.*
//        --only router-queue [--router-queue-rounds N] (3): issue 41's double-queueing on a real llama-server router (bench/router-queue.ts);
//          in the default list, skipped with the reason unless LLAMA_SERVER_BIN and LLAMA_MODELS_DIR are set

import { cpus, tmpdir } from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runControlPlaneBench, type ControlPlaneResult } from './control-plane.ts';
import { checkTarget } from './first-chunk.ts';
import { pickTool } from './load.ts';
import { commandVersion, hasCommand, installPeers, startNginx, type NginxChild } from './nginx.ts';
import { clockTicksPerSecond, waitForQuiet } from './proc-stats.ts';
import { runProfile } from './profile.ts';
import { proxyGatewayConfig, REPO_ROOT, startGateway, startNodeScript, type Child, type GatewayChild } from './processes.ts';
import { runFirstChunkBench, runProxyBench, summarize, type Target, type TargetName } from './proxy-bench.ts';
import { addedLatency, checkTargets, renderMarkdown, type BenchReport, type Machine } from './report.ts';
import type { FirstChunkResult } from './first-chunk.ts';
import type { IndexUpdateResult, RouteDecisionResult } from './route-decision.ts';
import type { TenantAdmissionResult } from './tenant-admission.ts';
import type { ClusterAdmissionResult } from './cluster-admission.ts';
import { round } from './stats.ts';
import { JSON_ANSWER_BYTES, SSE_CHUNKS } from './upstream.ts';
import { CONCURRENCIES, workloads, writeBodies } from './workloads.ts';
import { runWorkersBench, workersChecks } from './workers-bench.ts';
import { renderWorkersProjection, runWorkersProjection, type WorkersProjection } from './workers-projection.ts';
import { renderTracing, runTracingBench, type TracingBenchResult } from './tracing.ts';
import { runLeanProcessBench, type LeanProcessResult } from './cli-start.ts';
import { runTailsBench, type TailsResult } from './tails.ts';
import { issue28Checks } from './targets-28.ts';
import { renderIssue28 } from './report-28.ts';
import { runStreamsBench, type StreamsResult } from './streams-10k.ts';
import { RECOMMENDED_FLAGS, runSoak, type SoakResult } from './soak.ts';
import {
  footprintChecks,
  footprintExtrasCheck,
  renderFootprint,
  runFootprintBench,
  type FootprintResult,
} from './footprint-report.ts';
import { renderSessions, runSessionsBench, type SessionsBenchResult } from './agent-sessions.ts';
import { installPortkey } from './portkey.ts';
import { renderSideBySide, runSideBySide, type SideBySideResult } from './side-by-side.ts';
import { issue42Checks } from './targets-42.ts';
import { renderBatchYield, runBatchYieldBench, type BatchYieldResult } from './batch-yield.ts';
import { renderRouterQueue, runRouterQueueBench, type RouterQueueResult } from './router-queue.ts';

const log = (line: string): void => void process.stderr.write(`${line}\n`);

async function main(): Promise<void> {
  if (process.argv.includes('--mesh')) {
    // The federation benchmark is its own run (32 gateway processes): bench/mesh.ts.
    const { mainMesh } = await import('./mesh.ts');
    await mainMesh(process.argv.slice(2));
    return;
  }
  const started = performance.now();
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      'wait-quiet': { type: 'string', default: '20' },
      tool: { type: 'string' },
      only: { type: 'string', default: 'proxy,side,route,control,tracing,lean,tails,footprint,sessions,router-queue' },
      'install-peers': { type: 'boolean', default: false },
      'no-write': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      candidate: { type: 'string' },
      'gateway-flags': { type: 'string', default: '' },
      'candidate-flags': { type: 'string' },
      workers: { type: 'string', default: '2' },
      'candidate-log': { type: 'boolean', default: false },
      streams: { type: 'string', default: '10000' },
      'soak-minutes': { type: 'string', default: '10' },
      'batch-lines': { type: 'string', default: '10000' },
      'batch-measure': { type: 'string', default: '10' },
      'router-queue-rounds': { type: 'string', default: '3' },
    },
  });
  const notes: string[] = [];
  if (values['install-peers']) {
    log(`install peers: ${installPeers()}`);
    // Portkey (the side-by-side rows' Node peer) in a scratch folder of its own, never a dependency.
    log(`install peers: ${installPortkey()}`);
  }
  const tool = pickTool(values.tool);
  if (tool === 'autocannon') {
    const why = hasCommand('wrk')
      ? '--tool autocannon'
      : 'wrk is not installed; `npm run bench -- --install-peers` adds wrk and nginx';
    notes.push(`Load from autocannon (Node.js, latencies in whole ms): ${why}.`);
  }
  const durationS = Number(values.duration);
  const warmupS = Number(values.warmup);
  const rounds = Number(values.rounds);
  const only = new Set(values.only.split(','));
  const ticksPerSecond = clockTicksPerSecond();
  const nginxVersion = hasCommand('nginx') ? commandVersion('nginx', ['-v']).replace(/^nginx version: /, '') : undefined;
  if (nginxVersion === undefined)
    notes.push('nginx is not installed: no nginx rows (`npm run bench -- --install-peers` installs it with apt-get).');
  const quietS = Number(values['wait-quiet']);
  const background = quietS > 0 ? await waitForQuiet(ticksPerSecond, 15, quietS) : 0;
  if (background >= 15) {
    notes.push(
      `The machine was busy with other work at the start (${Math.round(background)}% of a core): numbers are noisier; see "other load" per row.`,
    );
  }
  const machine: Machine = {
    backgroundCpuPercentAtStart: background,
    cores: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    nodeVersion: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadTool: tool === 'wrk' ? `${commandVersion('wrk', ['-v']).split(' [')[0]} (1 thread)` : 'autocannon (devDependency)',
    nginx: nginxVersion === undefined ? undefined : `${nginxVersion} (1 worker, keep-alive upstream, proxy_buffering off)`,
  };
  const list = workloads(SSE_CHUNKS);
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-bench-bodies-'));
  const children: { stop(): Promise<void> }[] = [];
  try {
    if (values.profile) {
      await runProfile({ tool, list, bodyFiles: await writeBodies(dir, list), durationS: Math.max(durationS, 8), log });
      return;
    }
    let proxyRows: ReturnType<typeof summarize> = [];
    let workerChecks: ReturnType<typeof workersChecks> = [];
    let workersProjection: WorkersProjection | undefined;
    const firstChunk: Partial<Record<TargetName, FirstChunkResult>> = {};
    if (only.has('proxy')) {
      log(`proxy benchmark (${tool}, ${durationS} s per cell after ${warmupS} s warm-up, ${rounds} round(s))`);
      const bodyFiles = await writeBodies(dir, list);
      const upstream: Child = await startNodeScript('bench/upstream.ts');
      children.push(upstream);
      const upstreamUrl = String(upstream.ready.url);
      const nodeFlags = values['gateway-flags'].split(' ').filter((f) => f !== '');
      const gateway: GatewayChild = await startGateway(proxyGatewayConfig(upstreamUrl), { nodeFlags });
      children.push(gateway);
      const targets: Target[] = [
        { name: 'direct', url: upstreamUrl, proxy: undefined },
        { name: 'switchyard', url: gateway.url, proxy: { pids: () => [gateway.pid] } },
      ];
      const candidateFlags = values['candidate-flags'];
      if (values.candidate !== undefined || candidateFlags !== undefined || values['candidate-log']) {
        const root = values.candidate ?? REPO_ROOT;
        const flags = candidateFlags === undefined ? nodeFlags : candidateFlags.split(' ').filter((f) => f !== '');
        const logged = values['candidate-log'] ? `[log]\nrequests = "${join(dir, 'requests.log')}"\n` : '';
        if (logged !== '') notes.push('"candidate" writes the request log (`[log] requests = FILE` in a temporary directory).');
        const candidate = await startGateway(proxyGatewayConfig(upstreamUrl) + logged, { nodeFlags: flags, root });
        children.push(candidate);
        targets.push({ name: 'candidate', url: candidate.url, proxy: { pids: () => [candidate.pid] } });
        notes.push(
          `"candidate" is the gateway of ${root}${flags.length > 0 ? ` run with \`${flags.join(' ')}\`` : ''}, measured in the same run.`,
        );
      }
      // The reference row of issue 28: the bare stack proxy (bench/bare-proxy.ts).
      const bare = await startNodeScript('bench/bare-proxy.ts', [upstreamUrl]);
      children.push(bare);
      targets.push({ name: 'bare', url: String(bare.ready.url), proxy: { pids: () => [bare.pid] } });
      if (nginxVersion !== undefined) {
        const nginx: NginxChild = await startNginx(upstreamUrl);
        children.push(nginx);
        targets.push({ name: 'nginx', url: nginx.url, proxy: { pids: () => nginx.pids() } });
      }
      for (const target of targets) for (const w of list) await checkTarget(target.url, w.path, w.body, w.sseChunks);
      const upstreamGroup = { pids: () => [upstream.pid] };
      const raw = await runProxyBench({
        tool,
        targets,
        upstream: upstreamGroup,
        workloads: list,
        bodyFiles,
        concurrencies: CONCURRENCIES,
        durationS,
        warmupS,
        rounds,
        ticksPerSecond,
        log,
      });
      proxyRows = summarize(raw);
      const sse = list.find((w) => w.name === 'sse');
      if (sse !== undefined) {
        log('SSE time to first chunk (concurrency 1)');
        const fc = await runFirstChunkBench(targets, sse, Math.max(1000, (durationS * 1000) / 2), rounds);
        for (const [name, result] of fc) firstChunk[name] = result;
      }
      const workers = Number(values.workers);
      if (workers > 1) {
        log(`workers: [server] workers = ${workers} against nginx worker_processes ${workers}`);
        const options = {
          workers,
          tool,
          upstreamUrl,
          upstream: upstreamGroup,
          workloads: list,
          bodyFiles,
          durationS,
          warmupS,
          rounds,
          ticksPerSecond,
        };
        const result = await runWorkersBench({ ...options, withNginx: nginxVersion !== undefined, nodeFlags, log });
        proxyRows.push(...result.rows);
        workerChecks = workersChecks(proxyRows, workers);
        const jsonBody = bodyFiles.get('json');
        if (jsonBody !== undefined) {
          log(`workers: CPU per request by thread, workers = 1 and ${workers}, and the projection (bench/workers-projection.ts)`);
          workersProjection = await runWorkersProjection({ ...options, bodyFile: jsonBody, nodeFlags, log }, machine.cores);
          log(renderWorkersProjection(workersProjection));
        }
        const threads = result.roundTrip?.threads;
        const processes = result.roundTrip?.processes;
        if (threads !== undefined && processes !== undefined) {
          notes.push(
            `Admit round trip (bench/workers-roundtrip.ts): worker_threads MessagePort p50 ${threads.sequentialP50Us} µs, p99 ${threads.sequentialP99Us} µs, ` +
              `${threads.pipelinedPerSecond}/s with 64 outstanding; child-process IPC (node:cluster's channel) p50 ${processes.sequentialP50Us} µs, ` +
              `p99 ${processes.sequentialP99Us} µs, ${processes.pipelinedPerSecond}/s.`,
          );
        }
      }
      for (const child of children.splice(0).reverse()) await child.stop();
    }
    let sideBySide: SideBySideResult | undefined;
    if (only.has('side')) {
      log(`side by side (issue 42): a 22 ms upstream, JSON at c = 1 / 4 / 16 / 64, ${tool}`);
      const nodeFlags = values['gateway-flags'].split(' ').filter((f) => f !== '');
      sideBySide = await runSideBySide({ tool, durationS, warmupS, rounds, ticksPerSecond, dir, nodeFlags, log });
    }
    let tracing: TracingBenchResult | undefined;
    if (only.has('tracing')) {
      log('tracing cost: the same SSE load without [tracing], at sample_ratio 0 and at 1 (bench/tracing.ts)');
      const upstream = await startNodeScript('bench/upstream.ts');
      try {
        const bodyFile = (await writeBodies(dir, list)).get('sse') ?? '';
        tracing = await runTracingBench({
          tool,
          upstreamUrl: String(upstream.ready.url),
          bodyFile,
          durationS,
          warmupS,
          rounds,
          ticksPerSecond,
          log,
        });
      } finally {
        await upstream.stop();
      }
    }
    let routeDecision: RouteDecisionResult[] = [];
    let routeIndexUpdate: IndexUpdateResult | undefined;
    let tenantAdmission: TenantAdmissionResult[] = [];
    if (only.has('route')) {
      log('routing decision micro-benchmark');
      // The micro-benchmark announces itself only when every row is done (10,000 nodes included): minutes on a busy machine.
      const child = await startNodeScript('bench/route-decision.ts', ['1500'], [], 600_000);
      routeDecision = (child.ready.results as RouteDecisionResult[] | undefined) ?? [];
      routeIndexUpdate = child.ready.indexUpdate as IndexUpdateResult | undefined;
      await child.stop();
      log('tenant admission micro-benchmark');
      const tenants = await startNodeScript('bench/tenant-admission.ts', ['1500']);
      tenantAdmission = (tenants.ready.results as TenantAdmissionResult[] | undefined) ?? [];
      await tenants.stop();
      log('admission round trip with [cluster] (a local redis-server) against one gateway without it');
      const cluster = await startNodeScript('bench/cluster-admission.ts', ['2000']);
      const c = cluster.ready.result as ClusterAdmissionResult | undefined;
      await cluster.stop();
      if (c !== undefined)
        notes.push(
          `Admission with [cluster] (bench/cluster-admission.ts, ${c.requests} sequential requests): p50 ${c.clusterP50Us} µs vs ${c.aloneP50Us} µs alone (+${c.addedP50Us} µs, ×${c.ratioP50}), p99 ${c.clusterP99Us} µs vs ${c.aloneP99Us} µs (+${c.addedP99Us} µs, ×${c.ratioP99}); RSS of a replica (its own process, after 500 requests) ${c.replicaRssMb} MB.`,
        );
    }
    const controlPlane: ControlPlaneResult[] = [];
    if (only.has('control')) {
      const runs: { label: string; root?: string }[] = [{ label: 'switchyard' }];
      if (values.candidate !== undefined) runs.push({ label: 'candidate', root: values.candidate });
      for (const run of runs) {
        log(`control plane (${run.label}): 1,000 nodes polled every 2 s`);
        const jsonBodyFile = (await writeBodies(dir, list)).get('json') ?? '';
        const load = { tool, jsonBodyFile, durationS };
        controlPlane.push(
          await runControlPlaneBench({
            nodes: 1000,
            modelsPerNode: 50,
            intervalS: 2,
            warmupS: 8,
            measureS: 12,
            ticksPerSecond,
            load,
            ...run,
          }),
        );
      }
    }
    // Issue 28's rows: the lean process and fast CLI, then open-loop tails.
    let lean: LeanProcessResult | undefined;
    if (only.has('lean')) {
      log('lean process: CLI start times, serve ready, idle RSS');
      lean = await runLeanProcessBench(5);
    }
    let tails: TailsResult | undefined;
    if (only.has('tails')) {
      log('tails: 1,000 req/s open-loop, 100 nodes polled (running / paused)');
      const jsonBodyFile = (await writeBodies(dir, list)).get('json') ?? '';
      tails = await runTailsBench({ rate: 1000, seconds: Math.max(5, durationS * 2), nodes: 100, bodyFile: jsonBodyFile });
    }
    let streams: StreamsResult | undefined;
    if (only.has('streams')) {
      log(`streams: ${values.streams} concurrent SSE streams at 20 tokens/s, direct then through the gateway`);
      streams = await runStreamsBench({ streams: Number(values.streams), rate: 1000, holdS: 5, ticksPerSecond });
    }
    let soak: SoakResult | undefined;
    if (only.has('soak')) {
      log(`soak: ${values['soak-minutes']} min of mixed load on a 3-node sim fleet, the gateway's RSS sampled (bench/soak.ts)`);
      soak = await runSoak({ minutes: Number(values['soak-minutes']), concurrency: 8, seed: 1, gatewayFlags: RECOMMENDED_FLAGS });
    }
    let footprint: FootprintResult | undefined;
    if (only.has('footprint')) {
      log('footprint: what one plain request runs, awaits and allocates (bench/footprint.ts)');
      footprint = await runFootprintBench({ ...(values.candidate === undefined ? {} : { candidate: values.candidate }), log });
    }
    let sessions: SessionsBenchResult | undefined;
    if (only.has('sessions')) sessions = await runSessionsBench({ log });
    let batch: BatchYieldResult | undefined;
    if (only.has('batch'))
      batch = await runBatchYieldBench({ lines: Number(values['batch-lines']), measureS: Number(values['batch-measure']), log });
    let routerQueue: RouterQueueResult | undefined;
    if (only.has('router-queue')) {
      routerQueue = await runRouterQueueBench({ rounds: Number(values['router-queue-rounds']), log });
      if ('skipped' in routerQueue) notes.push(`${routerQueue.skipped}.`);
    }
    const runSeconds = (performance.now() - started) / 1000;
    const added = addedLatency(proxyRows);
    const report: BenchReport & {
      tracing?: TracingBenchResult;
      footprint?: FootprintResult;
      sessions?: SessionsBenchResult;
      sideBySide?: SideBySideResult;
      batch?: BatchYieldResult;
      routerQueue?: RouterQueueResult;
      workersProjection?: WorkersProjection;
    } = {
      generatedAt: new Date().toISOString(),
      machine,
      settings: { durationS, warmupS, rounds, sseChunks: SSE_CHUNKS, jsonAnswerBytes: JSON_ANSWER_BYTES },
      proxy: proxyRows,
      addedLatency: added,
      firstChunk,
      routeDecision,
      ...(routeIndexUpdate === undefined ? {} : { routeIndexUpdate }),
      ...(tenantAdmission.length === 0 ? {} : { tenantAdmission }),
      controlPlane,
      ...(tracing === undefined ? {} : { tracing }),
      targets: [
        ...issue42Checks({ proxy: proxyRows, sideBySide, control: controlPlane[0], lean, workers: workersProjection, footprint }),
        ...checkTargets(proxyRows, added, routeDecision, controlPlane[0], runSeconds),
        ...workerChecks,
        ...issue28Checks({
          proxy: proxyRows,
          added,
          routes: routeDecision,
          control: controlPlane[0],
          lean,
          tails,
          streams,
          soak,
        }),
        ...footprintChecks(footprint),
      ],
      ...(lean === undefined ? {} : { lean }),
      ...(tails === undefined ? {} : { tails }),
      ...(streams === undefined ? {} : { streams }),
      ...(soak === undefined ? {} : { soak }),
      ...(footprint === undefined ? {} : { footprint }),
      ...(sessions === undefined ? {} : { sessions }),
      ...(sideBySide === undefined ? {} : { sideBySide }),
      ...(batch === undefined ? {} : { batch }),
      ...(routerQueue === undefined ? {} : { routerQueue }),
      ...(workersProjection === undefined ? {} : { workersProjection }),
      runSeconds,
      notes,
    };
    const markdown =
      renderMarkdown(report) +
      renderSideBySide(sideBySide) +
      renderWorkersProjection(workersProjection) +
      renderTracing(tracing) +
      renderIssue28(report) +
      renderFootprint(footprint) +
      renderSessions(sessions) +
      renderBatchYield(batch) +
      renderRouterQueue(routerQueue);
    if (!values['no-write']) {
      const json = (value: unknown): string =>
        `${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' ? round(v) : v), 2)}\n`;
      // `--only footprint`, `--only sessions`, `--only batch` and `--only router-queue` write their own files, as the mesh run does: latest.* keeps the last full run.
      const ownFiles = new Set(['footprint', 'sessions', 'batch', 'router-queue']);
      if ([...only].some((suite) => !ownFiles.has(suite))) {
        await writeFile(join(REPO_ROOT, 'bench/results/latest.json'), json(report));
        await writeFile(join(REPO_ROOT, 'bench/results/latest.md'), markdown);
        log('wrote bench/results/latest.json and bench/results/latest.md');
      }
      if (footprint !== undefined) {
        const { generatedAt, machine: m } = report;
        await writeFile(join(REPO_ROOT, 'bench/results/footprint-latest.json'), json({ generatedAt, machine: m, footprint }));
        const title = `# Footprint of one request (${generatedAt}, Node ${m.nodeVersion}, ${m.cpuModel})\n`;
        const checks = [...footprintChecks(footprint), footprintExtrasCheck(footprint)].map(
          (c) => `| ${c.goal} | ${c.measured} | ${c.met === true ? 'yes' : 'no'} |`,
        );
        const table = ['', '| goal | measured | met |', '|---|---|---|', ...checks, ''].join('\n');
        await writeFile(join(REPO_ROOT, 'bench/results/footprint-latest.md'), title + table + renderFootprint(footprint));
        log('wrote bench/results/footprint-latest.json and bench/results/footprint-latest.md');
      }
      if (sessions !== undefined) {
        const { generatedAt, machine: m } = report;
        await writeFile(join(REPO_ROOT, 'bench/results/sessions-latest.json'), json({ generatedAt, machine: m, sessions }));
        const title = `# Agent sessions (${generatedAt}, Node ${m.nodeVersion}, ${m.cpuModel})\n`;
        await writeFile(join(REPO_ROOT, 'bench/results/sessions-latest.md'), title + renderSessions(sessions));
        log('wrote bench/results/sessions-latest.json and bench/results/sessions-latest.md');
      }
      if (batch !== undefined) {
        const { generatedAt, machine: m } = report;
        await writeFile(join(REPO_ROOT, 'bench/results/batch-latest.json'), json({ generatedAt, machine: m, batch }));
        const title = `# Batch in spare capacity (${generatedAt}, Node ${m.nodeVersion}, ${m.cpuModel})\n`;
        await writeFile(join(REPO_ROOT, 'bench/results/batch-latest.md'), title + renderBatchYield(batch));
        log('wrote bench/results/batch-latest.json and bench/results/batch-latest.md');
      }
      if (routerQueue !== undefined && 'rows' in routerQueue) {
        const { generatedAt, machine: m } = report;
        await writeFile(
          join(REPO_ROOT, 'bench/results/router-queue-latest.json'),
          json({ generatedAt, machine: m, routerQueue }),
        );
        const title = `# Router queue (${generatedAt}, Node ${m.nodeVersion}, ${m.cpuModel})\n`;
        await writeFile(join(REPO_ROOT, 'bench/results/router-queue-latest.md'), title + renderRouterQueue(routerQueue));
        log('wrote bench/results/router-queue-latest.json and bench/results/router-queue-latest.md');
      }
    }
    process.stdout.write(markdown);
  } finally {
    for (const child of children.reverse()) await child.stop().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
