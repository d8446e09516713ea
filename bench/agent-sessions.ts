// Issue 40's agent-session row: 8 coding-agent sessions of 20 turns each, all at once (c=8), on 3
// simulated llama.cpp nodes with prompt-cache timing (a prompt found in a slot's cache answers its
// first token sooner: docs/simulator.md, "Prompt cache"). Each turn is a streamed chat completion
// carrying Claude Code's session header and the whole conversation so far (a system prompt of its
// own, every earlier turn and answer): what an agent sends. Measured twice, each on a fresh fleet
// and gateway: the defaults (sessions kept on their node) and a round-robin control
// (`policy = "round-robin"`, `sessions = false`). The figure: time to first token p50, and the
// ratio. The sims run in this process, the gateway in its own (bench/processes.ts).
//
// `node bench/agent-sessions.ts` prints the result as one JSON line; `npm run bench -- --only sessions`
// writes bench/results/sessions-latest.{json,md}.

import { parseFleetConfig, startFleet, type Fleet } from '../src/sim/index.ts';
import { startGateway, sleepMs, type GatewayChild } from './processes.ts';
import { percentile } from './stats.ts';

export interface SessionsArmResult {
  readonly arm: 'sessions kept (default)' | 'round-robin control';
  readonly turns: number;
  readonly ttftP50Ms: number;
  readonly ttftP90Ms: number;
  readonly ttftMeanMs: number;
  /** Turns after a session's first that went to another node than its turn before. */
  readonly nodeChanges: number;
  readonly wallS: number;
}

export interface SessionsBenchResult {
  readonly sessions: number;
  readonly turnsPerSession: number;
  readonly nodes: number;
  readonly coldTtftMs: number;
  readonly cachedTtftMs: number;
  readonly arms: readonly SessionsArmResult[];
  /** Control p50 over sessions-kept p50. */
  readonly p50Ratio: number;
}

export interface SessionsBenchOptions {
  readonly sessions?: number;
  readonly turns?: number;
  readonly coldTtftMs?: number;
  readonly cachedTtftMs?: number;
  readonly log?: (line: string) => void;
}

const MODEL = 'agent';

function fleetToml(coldMs: number, cachedMs: number): string {
  return ['a', 'b', 'c']
    .map(
      (name) => `
[[node]]
name = "llama-${name}"
kind = "llamacpp"
models = ["${MODEL}"]
context = 131072
slots = 4
kv = "per-slot"
ttft = "${coldMs}ms"
prefix_cache_ttft = "${cachedMs}ms"
tokens_per_second = 400
`,
    )
    .join('');
}

function gatewayToml(fleet: Fleet, routing: string): string {
  const lines = ['[server]', 'listen = "127.0.0.1:0"', '[health]', 'interval = "500ms"', '[discovery]', 'interval = "500ms"'];
  for (const node of fleet.nodes) lines.push('[[nodes]]', `name = "${node.name}"`, `url = "${node.url}"`, 'kind = "llamacpp"');
  return `${lines.join('\n')}\n${routing}\n`;
}

/** Waits until the gateway lists the model (its discovery has seen every node), bounded. */
export async function waitForModel(gateway: GatewayChild, nodes: number, model = MODEL): Promise<void> {
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const res = await fetch(`${gateway.url}/admin/hosts`).catch(() => undefined);
    if (res?.ok === true) {
      const text = await res.text();
      if ((text.match(new RegExp(`"${model}"`, 'g')) ?? []).length >= nodes) return;
    }
    await sleepMs(100);
  }
  throw new Error('the gateway did not list the model on every node within 30 s');
}

/** A session's own opening: its own working directory and notes, as an agent's system prompt has. */
function systemPrompt(session: number): string {
  const own = `Session ${session}: working directory /work/project-${session}, branch feature-${session}.`;
  return `${own}\n${'You are a coding agent. Follow the repository conventions, run the tests, keep changes small. '.repeat(60)}`;
}

interface Turn {
  readonly ttftMs: number;
  readonly node: string;
  readonly answer: string;
}

/** One streamed turn: time to the first content token, the node that answered, the answer's text. */
async function oneTurn(url: string, sessionId: string, messages: readonly unknown[]): Promise<Turn> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-claude-code-session-id': sessionId },
    body: JSON.stringify({ model: MODEL, messages, max_tokens: 12, stream: true }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!res.ok || res.body === null) throw new Error(`turn answered ${res.status}: ${await res.text()}`);
  const decoder = new TextDecoder();
  let text = '';
  let ttftMs: number | undefined;
  for await (const chunk of res.body) {
    text += decoder.decode(chunk, { stream: true });
    if (ttftMs === undefined && /"content":"[^"]/.test(text)) ttftMs = performance.now() - started;
  }
  const answer = [...text.matchAll(/"content":"((?:[^"\\]|\\.)*)"/g)]
    .map((m) => JSON.parse(`"${m[1] ?? ''}"`) as string)
    .join('');
  return { ttftMs: ttftMs ?? performance.now() - started, node: res.headers.get('x-switchyard-node') ?? '?', answer };
}

async function runArm(
  arm: SessionsArmResult['arm'],
  routing: string,
  options: Required<Omit<SessionsBenchOptions, 'log'>>,
): Promise<SessionsArmResult> {
  const parsed = parseFleetConfig(fleetToml(options.coldTtftMs, options.cachedTtftMs));
  if (!parsed.ok) throw new Error(`bad bench fleet: ${parsed.problems.map((p) => p.message).join('; ')}`);
  const fleet = await startFleet(parsed.spec, { host: '127.0.0.1' });
  let gateway: GatewayChild | undefined;
  try {
    gateway = await startGateway(gatewayToml(fleet, routing));
    await waitForModel(gateway, fleet.nodes.length);
    const url = gateway.url;
    const started = performance.now();
    const perSession = await Promise.all(
      Array.from({ length: options.sessions }, async (_, s) => {
        const id = `bench-session-${s}-${arm.length}`;
        const messages: { role: string; content: string }[] = [{ role: 'system', content: systemPrompt(s) }];
        const turns: Turn[] = [];
        for (let t = 0; t < options.turns; t += 1) {
          messages.push({ role: 'user', content: `Turn ${t} of session ${s}: ${'read the file, then edit it. '.repeat(12)}` });
          const turn = await oneTurn(url, id, messages);
          turns.push(turn);
          if (process.env.SESSIONS_TRACE) process.stderr.write(`${arm} s${s} t${t} ${turn.node} ${turn.ttftMs.toFixed(0)}\n`);
          messages.push({ role: 'assistant', content: turn.answer });
        }
        return turns;
      }),
    );
    const wallS = (performance.now() - started) / 1000;
    const ttfts = perSession.flat().map((t) => t.ttftMs);
    const nodeChanges = perSession.reduce(
      (sum, turns) => sum + turns.filter((t, i) => i > 0 && t.node !== turns[i - 1]?.node).length,
      0,
    );
    return {
      arm,
      turns: ttfts.length,
      ttftP50Ms: percentile(ttfts, 50),
      ttftP90Ms: percentile(ttfts, 90),
      ttftMeanMs: ttfts.reduce((a, b) => a + b, 0) / ttfts.length,
      nodeChanges,
      wallS,
    };
  } finally {
    await gateway?.stop().catch(() => {});
    await fleet.close();
  }
}

export async function runSessionsBench(options: SessionsBenchOptions = {}): Promise<SessionsBenchResult> {
  const settings = {
    sessions: options.sessions ?? 8,
    turns: options.turns ?? 20,
    coldTtftMs: options.coldTtftMs ?? 400,
    cachedTtftMs: options.cachedTtftMs ?? 40,
  };
  const log = options.log ?? (() => {});
  log(
    `sessions: ${settings.sessions} sessions x ${settings.turns} turns at c=${settings.sessions}, sessions kept (the defaults)`,
  );
  const kept = await runArm('sessions kept (default)', '', settings);
  log('sessions: the same, round-robin control (sessions = false)');
  const control = await runArm('round-robin control', '[routing]\npolicy = "round-robin"\nsessions = false', settings);
  return {
    sessions: settings.sessions,
    turnsPerSession: settings.turns,
    nodes: 3,
    coldTtftMs: settings.coldTtftMs,
    cachedTtftMs: settings.cachedTtftMs,
    arms: [kept, control],
    p50Ratio: control.ttftP50Ms / Math.max(1e-9, kept.ttftP50Ms),
  };
}

export function renderSessions(result: SessionsBenchResult | undefined): string {
  if (result === undefined) return '';
  const out = [
    '',
    `### Agent sessions: ${result.sessions} sessions x ${result.turnsPerSession} turns at c=${result.sessions}, ${result.nodes} llama.cpp sims (first token ${result.coldTtftMs} ms, ${result.cachedTtftMs} ms when cached)`,
    '',
    '| routing | turns | TTFT p50 ms | TTFT p90 ms | TTFT mean ms | node changes | wall s |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const a of result.arms)
    out.push(
      `| ${a.arm} | ${a.turns} | ${a.ttftP50Ms.toFixed(1)} | ${a.ttftP90Ms.toFixed(1)} | ${a.ttftMeanMs.toFixed(1)} | ${a.nodeChanges} | ${a.wallS.toFixed(1)} |`,
    );
  out.push('', `Round-robin p50 / sessions-kept p50: ${result.p50Ratio.toFixed(1)}x.`, '');
  return out.join('\n');
}

if (import.meta.main) {
  const result = await runSessionsBench({ log: (line) => void process.stderr.write(`${line}\n`) });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
