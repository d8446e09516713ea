// Issue 21, item 1: a refusal needs proof. Every node kind (vLLM, llama.cpp single and router,
// Ollama, SGLang, a plain OpenAI-compatible server), English / code / CJK prompts at 50 %, 90 % and
// 110 % of a 4096-token context, with the nodes' tokenizers answering and with every tokenizer
// hung (tokenize_timeout missed), and once more with `[server] workers = 2`: no prompt that fits
// is refused, and every prompt that does not fit ends in a clear 400 (the gateway's, or the node's
// normalised) — except on Ollama, which cannot refuse (it truncates silently at num_ctx): there
// the answer carries `x-switchyard-context: may-truncate`. A mixed fleet shows the Ollama rule: a
// prompt that may not fit the Ollama node goes to the node that refuses an overflow instead.
// The table of outcomes is printed as a test diagnostic (and to $CONTEXT_TABLE_OUT when set).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import { gatewayToml } from '#test/fixtures/gateway-configs.ts';
import { startGateway, startSimFleet, type GatewayUnderTest, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults, type JsonResponse } from '#test/fixtures/http.ts';
import { servedBy } from '#test/fixtures/gateway-state.ts';
import { waitForHost } from '#test/fixtures/context.ts';
import { chatOfLanguage, LANGUAGES } from '#test/fixtures/prompt-languages.ts';

const CTX = 4096;
const MAX_TOKENS = 8;
const FRACTIONS = [0.5, 0.9, 1.1];

const FLEET = `
[[node]]
name = "vllm"
kind = "vllm"
models = ["m-vllm"]
context = ${CTX}
ttft = "1ms"
tokens_per_second = 5000

[[node]]
name = "llamacpp"
kind = "llamacpp"
models = ["m-llamacpp"]
context = ${CTX}
ttft = "1ms"
tokens_per_second = 5000

[[node]]
name = "router"
kind = "llamacpp-router"
ttft = "1ms"
tokens_per_second = 5000

[[node.model]]
id = "m-router"
status = "loaded"
context = ${CTX}

[[node]]
name = "ollama"
kind = "ollama"
ttft = "1ms"
tokens_per_second = 5000

[[node.model]]
id = "m-ollama:latest"
status = "loaded"
context = ${CTX}

[[node]]
name = "sglang"
kind = "sglang"
models = ["m-sglang"]
context = ${CTX}
ttft = "1ms"
tokens_per_second = 5000

[[node]]
name = "openai"
kind = "vllm"
models = ["m-openai"]
context = ${CTX}
ttft = "1ms"
tokens_per_second = 5000

[[node]]
name = "mix-ollama"
kind = "ollama"
ttft = "1ms"
tokens_per_second = 5000

[[node.model]]
id = "mix:latest"
status = "loaded"
context = ${CTX}

[[node]]
name = "mix-vllm"
kind = "vllm"
models = ["mix:latest"]
context = ${2 * CTX}
ttft = "1ms"
tokens_per_second = 5000
`;

/** Gateway node name → its configured kind ("openai" is a vLLM sim the gateway knows only as OpenAI-compatible). */
const KINDS: Readonly<Record<string, string>> = {
  vllm: 'vllm',
  llamacpp: 'llamacpp',
  router: 'llamacpp',
  ollama: 'ollama',
  sglang: 'sglang',
  openai: 'openai',
  'mix-ollama': 'ollama',
  'mix-vllm': 'vllm',
};
const SINGLE = ['vllm', 'llamacpp', 'router', 'ollama', 'sglang', 'openai'];
const MODEL: Readonly<Record<string, string>> = {
  vllm: 'm-vllm',
  llamacpp: 'm-llamacpp',
  router: 'm-router',
  ollama: 'm-ollama:latest',
  sglang: 'm-sglang',
  openai: 'm-openai',
};

interface Row {
  readonly phase: string;
  readonly fleet: string;
  readonly language: string;
  readonly percent: number;
  readonly tokens: number;
  readonly fits: boolean;
  readonly status: number;
  readonly node: string | undefined;
  readonly outcome: string;
}

const rows: Row[] = [];
let sim: SimFleet;

before(async () => {
  sim = await startSimFleet(FLEET);
});

after(async () => {
  await sim?.close();
  const table = renderTable(rows);
  if (process.env.CONTEXT_TABLE_OUT) await appendFile(process.env.CONTEXT_TABLE_OUT, `${table}\n`);
});

function outcomeOf(res: JsonResponse, fits: boolean, askedNode: string): string {
  if (res.status === 400) {
    const code = res.json<{ error?: { code?: string } }>().error?.code;
    return fits ? `FALSE REFUSAL (${code})` : 'refused 400';
  }
  if (res.status !== 200) return `status ${res.status}`;
  const node = servedBy(res);
  if (fits) return node === askedNode ? 'served' : `served by ${node}`;
  if (node !== askedNode) return `re-routed to ${node}`;
  const warning = res.headers['x-switchyard-context'];
  return typeof warning === 'string' && warning.startsWith('may-truncate')
    ? 'forwarded, may-truncate header'
    : 'SERVED WITHOUT PROOF';
}

async function startPhase(tokenizer: boolean, workers: number): Promise<GatewayUnderTest> {
  for (const node of sim.nodes) await setSimFaults(node.url, { tokenize: tokenizer ? 'none' : 'hang' });
  const nodes = sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: KINDS[n.name] ?? 'auto' }));
  const gw = await startGateway(
    gatewayToml(nodes, tokenizer ? '' : '[routing]\ntokenize_timeout = "100ms"', workers > 1 ? `workers = ${workers}` : ''),
  );
  for (const name of Object.keys(KINDS)) {
    await waitForHost(
      gw,
      name,
      (h) => Object.values(h.models ?? {}).some((m) => m.n_ctx > 0) || h.kind === 'openai',
      'context known',
    );
  }
  await waitForHost(gw, 'openai', (h) => h.discovery.state === 'known', 'listed');
  return gw;
}

const PHASES = [
  { name: 'tokenizer', tokenizer: true, workers: 1 },
  { name: 'no tokenizer', tokenizer: false, workers: 1 },
  { name: 'no tokenizer, workers = 2', tokenizer: false, workers: 2 },
];

for (const phase of PHASES) {
  describe(`${phase.name}`, () => {
    let gw: GatewayUnderTest;
    before(async () => {
      gw = await startPhase(phase.tokenizer, phase.workers);
    });
    after(async () => {
      await gw?.close();
    });

    for (const kind of SINGLE) {
      test(`${kind}: English, code and CJK at 50 %, 90 %, 110 % of the context`, async () => {
        const problems: string[] = [];
        for (const language of LANGUAGES) {
          for (const fraction of FRACTIONS) {
            const prompt = chatOfLanguage(MODEL[kind] ?? '', language, Math.round(CTX * fraction), { max_tokens: MAX_TOKENS });
            const fits = prompt.tokens + MAX_TOKENS < CTX;
            const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
            const outcome = outcomeOf(res, fits, kind);
            rows.push({
              phase: phase.name,
              fleet: kind,
              language,
              percent: Math.round(fraction * 100),
              tokens: prompt.tokens,
              fits,
              status: res.status,
              node: servedBy(res),
              outcome,
            });
            const good = fits
              ? outcome === 'served'
              : outcome === 'refused 400' || (kind === 'ollama' && outcome === 'forwarded, may-truncate header');
            if (!good)
              problems.push(
                `${language} ${Math.round(fraction * 100)}% (${prompt.tokens} tokens, ${prompt.bytes} bytes): ${outcome}: ${res.text.slice(0, 300)}`,
              );
            if (res.status === 400 && !fits) {
              const message = res.json<{ error: { message: string } }>().error.message;
              assert.match(message, /maximum context length is \d+ tokens/, message);
            }
          }
        }
        assert.deepEqual(problems, []);
      });
    }

    test('mixed fleet (Ollama 4096, vLLM 8192, one model): a prompt that may not fit Ollama goes to the node that refuses overflow', async () => {
      const problems: string[] = [];
      for (const language of LANGUAGES) {
        for (const fraction of [0.5, 0.9, 1.1, 2.2]) {
          const prompt = chatOfLanguage('mix:latest', language, Math.round(CTX * fraction), { max_tokens: MAX_TOKENS });
          const fitsOllama = prompt.tokens + MAX_TOKENS < CTX;
          const fitsAny = prompt.tokens + MAX_TOKENS <= 2 * CTX;
          const res = await httpJson('POST', `${gw.url}/v1/chat/completions`, prompt.body);
          const node = servedBy(res);
          const outcome =
            res.status === 400
              ? fitsAny
                ? 'FALSE REFUSAL'
                : 'refused 400'
              : res.status !== 200
                ? `status ${res.status}`
                : node === 'mix-ollama' && !fitsOllama
                  ? 'TRUNCATED BY OLLAMA'
                  : fitsOllama
                    ? `served by ${node}`
                    : `re-routed to ${node}`;
          rows.push({
            phase: phase.name,
            fleet: 'ollama+vllm',
            language,
            percent: Math.round(fraction * 100),
            tokens: prompt.tokens,
            fits: fitsAny,
            status: res.status,
            node,
            outcome,
          });
          const good = fitsAny ? res.status === 200 && (fitsOllama || node === 'mix-vllm') : res.status === 400;
          if (!good)
            problems.push(
              `${language} ${Math.round(fraction * 100)}% (${prompt.tokens} tokens): ${outcome}: ${res.text.slice(0, 300)}`,
            );
        }
      }
      assert.deepEqual(problems, []);
    });
  });
}

test('the table', (t) => {
  t.diagnostic(`\n${renderTable(rows)}`);
  assert.ok(rows.length > 0);
});

/** Per phase, fleet and language: prompts tried, false refusals, overflows refused / re-routed / forwarded with a warning. */
function renderTable(all: readonly Row[]): string {
  const lines = [
    '| phase | fleet | language | prompts | false refusals | overflows | refused 400 | re-routed | may-truncate header | not handled |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const keys = [...new Set(all.map((r) => `${r.phase}|${r.fleet}|${r.language}`))];
  for (const key of keys) {
    const group = all.filter((r) => `${r.phase}|${r.fleet}|${r.language}` === key);
    const overflows = group.filter((r) => !r.fits || r.outcome === 'TRUNCATED BY OLLAMA' || r.outcome.startsWith('re-routed'));
    const count = (p: (r: Row) => boolean): number => group.filter(p).length;
    const [phase, fleet, language] = key.split('|');
    lines.push(
      `| ${phase} | ${fleet} | ${language} | ${group.length} | ${count((r) => r.outcome.includes('FALSE REFUSAL'))} | ${overflows.length} | ${count((r) => r.outcome === 'refused 400')} | ${count((r) => r.outcome.startsWith('re-routed'))} | ${count((r) => r.outcome.includes('may-truncate'))} | ${count((r) => r.outcome === 'SERVED WITHOUT PROOF' || r.outcome === 'TRUNCATED BY OLLAMA' || r.outcome.startsWith('status'))} |`,
    );
  }
  return lines.join('\n');
}
