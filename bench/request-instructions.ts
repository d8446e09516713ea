// Instructions per request, counted by valgrind (callgrind): the one figure on a busy shared
// machine that does not move with the load of others. Each proxy — the bare stack proxy, this
// checkout's gateway and (with --candidate DIR) another checkout's — runs under callgrind with
// instrumentation off; it is warmed with --warmup requests (the JIT settles), then instrumentation
// is switched on for exactly --requests requests at --connections, dumped, and the dump's total
// divided by the requests. User-space instructions of every thread (GC and compiler threads too);
// the kernel's share is not counted.
//
//   node bench/request-instructions.ts [--candidate DIR] [--workload json|sse|body10k]
//                                      [--requests 2000] [--warmup 5000] [--connections 8]
//                                      [--usage-nulls] ["--candidate-flags=--max-semi-space-size=8"]
//                                      ["--candidate-env=MALLOC_ARENA_MAX=2 ..."]
//
// --candidate-flags / --candidate-env: the candidate's Node flags (the chosen heap flags are added
// unless it names its own) and environment (space-separated NAME=VALUE): with --candidate ., one
// checkout under two heap or malloc settings, its collector's share side by side.
// --usage-nulls: the upstream answers a stream asked for its usage as vLLM does (bench/upstream.ts):
// `"usage":null` on every chunk and a usage chunk, which the gateway takes out again. The bare
// proxy's streams are not asked, so it gets the plain stream.
//
// Prints one JSON line: per target, instructions per request and the ratio to bare, and the same
// split into the garbage collector's, the JIT compiler's and the rest ("mutator": the code the
// requests run). A collection or a compilation landing in the window moves the total by tens of
// thousands per request; the mutator figure stays put. The dumps stay in a temporary directory
// named in the output (callgrind_annotate FILE: where the instructions went).

import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { proxyGatewayConfig, REPO_ROOT, startChild, startNodeScript, withHeapFlags, type Child } from './processes.ts';
import { workloads, type WorkloadName } from './workloads.ts';
import { writeFile } from 'node:fs/promises';

const { values } = parseArgs({
  options: {
    candidate: { type: 'string' },
    workload: { type: 'string', default: 'json' },
    requests: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '8' },
    'usage-nulls': { type: 'boolean', default: false },
    'candidate-flags': { type: 'string', default: '' },
    'candidate-env': { type: 'string', default: '' },
  },
});

const workload = workloads().find((w) => w.name === (values.workload as WorkloadName));
if (workload === undefined) throw new Error('--workload: json, sse or body10k');
const dir = await mkdtemp(join(tmpdir(), 'switchyard-instructions-'));
const upstream = await startNodeScript('bench/upstream.ts', values['usage-nulls'] ? ['--usage-nulls'] : []);
const results: Record<string, Split> = {};

interface Split {
  readonly total: number;
  readonly gc: number;
  readonly compiler: number;
  readonly mutator: number;
}

const GC =
  /Scaveng|Marking|MarkCompact|Sweep|Evacuat|IterateObjectCache|GlobalHandles|heap::base|v8::internal::Heap::|HeapObject::SizeFromMap|MemoryAllocator|RememberedSet|SlotSet|MinorMS|Compaction|BodyDescriptor|Visitor|FreeList|RelocIterator|Worklist|NeedsResetDueToFlushedBytecode|PageMetadata|MutablePage/;
const COMPILER =
  /v8::internal::compiler::|maglev::|turboshaft::|v8::internal::(Parser|ParserBase|PreParser|Scanner|BytecodeGenerator|interpreter::|Compiler::|OptimizingCompileDispatcher|baseline::)/;
try {
  const upstreamUrl = String(upstream.ready.url);
  const targets: { name: string; args: string[]; ready: string; env?: Record<string, string> }[] = [
    { name: 'bare', args: [join(REPO_ROOT, 'bench/bare-proxy.ts'), upstreamUrl], ready: '"event":"' },
  ];
  const config = join(dir, 'switchyard.toml');
  await writeFile(config, proxyGatewayConfig(upstreamUrl));
  const gateway = (
    name: string,
    root: string,
    flags: readonly string[] = [],
    env: Record<string, string> = {},
  ): { name: string; args: string[]; ready: string; env: Record<string, string> } => ({
    name,
    args: [...withHeapFlags(flags), join(root, 'bin/switchyard.js'), 'serve', '--config', config],
    ready: '"gateway listening"',
    env,
  });
  targets.push(gateway('switchyard', REPO_ROOT));
  if (values.candidate !== undefined) {
    const flags = values['candidate-flags'].split(' ').filter((flag) => flag !== '');
    const env = Object.fromEntries(
      values['candidate-env']
        .split(' ')
        .filter((pair) => pair.includes('='))
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    targets.push(gateway('candidate', resolve(values.candidate), flags, env));
  }
  for (const target of targets) results[target.name] = await measure(target);
  const bare = results.bare;
  const ratio = (a: number, b: number | undefined): number => Math.round((a / (b ?? a)) * 100) / 100;
  const vsBare = Object.fromEntries(
    Object.entries(results).map(([name, r]) => [
      name,
      { total: ratio(r.total, bare?.total), mutator: ratio(r.mutator, bare?.mutator) },
    ]),
  );
  process.stdout.write(
    `${JSON.stringify({ workload: workload.name, usageNulls: values['usage-nulls'], requests: Number(values.requests), connections: Number(values.connections), instructionsPerRequest: results, vsBare, dumps: dir })}\n`,
  );
} finally {
  await upstream.stop();
}

async function measure(target: { name: string; args: string[]; ready: string; env?: Record<string, string> }): Promise<Split> {
  const out = join(dir, `${target.name}.callgrind`);
  const child: Child = await startChild({
    command: 'valgrind',
    args: ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, process.execPath, ...target.args],
    isReady: (line) => line.includes(target.ready),
    timeoutMs: 300_000,
    env: target.env ?? {},
  });
  try {
    const url = new URL(workload?.path ?? '/', String(child.ready.url));
    await send(url, Number(values.warmup));
    execFileSync('callgrind_control', ['--instr=on', String(child.pid)], { stdio: 'ignore' });
    await send(url, Number(values.requests));
    execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--instr=off', String(child.pid)], { stdio: 'ignore' });
  } finally {
    await child.stop();
  }
  const dumps = (await readdir(dir)).filter((f) => f.startsWith(`${target.name}.callgrind.`));
  const split = { total: 0, gc: 0, compiler: 0 };
  for (const file of dumps) {
    const text = await readFile(join(dir, file), 'utf8');
    split.total += Number(/^summary: (\d+)/m.exec(text)?.[1] ?? 0);
    // Self instructions by function: every function listed (threshold 100 %), classified by its name.
    const annotated = execFileSync('callgrind_annotate', ['--threshold=100', join(dir, file)], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    for (const line of annotated.split('\n')) {
      const match = /^\s*([\d,]+) \([^)]*\)\s+(.*)$/.exec(line);
      if (match === null || match[2]?.includes('PROGRAM TOTALS')) continue;
      const ir = Number(match[1]?.replaceAll(',', ''));
      if (GC.test(match[2] ?? '')) split.gc += ir;
      else if (COMPILER.test(match[2] ?? '')) split.compiler += ir;
    }
  }
  const perRequest = (ir: number): number => Math.round(ir / Number(values.requests));
  return {
    total: perRequest(split.total),
    gc: perRequest(split.gc),
    compiler: perRequest(split.compiler),
    mutator: perRequest(split.total - split.gc - split.compiler),
  };
}

/** Exactly `count` POSTs of the workload's body over keep-alive connections; every answer must be 200. */
async function send(url: URL, count: number): Promise<void> {
  const body = workload?.body ?? Buffer.alloc(0);
  const connections = Number(values.connections);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let sent = 0;
  const one = (): Promise<void> =>
    new Promise((done, fail) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } },
        (res) => {
          if (res.statusCode !== 200) fail(new Error(`${url}: HTTP ${res.statusCode}`));
          res.resume();
          res.once('end', () => done());
        },
      );
      req.once('error', fail);
      req.end(body);
    });
  const lane = async (): Promise<void> => {
    while (sent < count) {
      sent += 1;
      await one();
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, lane));
  } finally {
    agent.destroy();
  }
}
