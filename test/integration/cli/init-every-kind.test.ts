// `switchyard init` end to end (issue 16): a simulated node of every kind plus a plain
// OpenAI-compatible server and a dead URL; init (the real CLI) detects each kind without loading a
// model, writes a config that `switchyard serve` then runs, and every model it found is routed to
// the node that has it. --out refuses to overwrite without --force.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { loadConfig } from '#src/config-tables.ts';
import { startSimFleet, type SimFleet } from '#test/fixtures/in-process-fleet.ts';
import { startListingNode, type ListingNode } from '#test/fixtures/listing-node.ts';
import { startCli, startGatewayProcess, writeTempFile, type GatewayProcess } from '#test/fixtures/processes.ts';
import { httpJson } from '#test/fixtures/http.ts';
import { chat, servedBy } from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';

const FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["v-model", "v-lora"]
context = 8192

[[node]]
name = "llamacpp-a"
kind = "llamacpp"
models = ["l-model"]
context = 4096
slots = 2

[[node]]
name = "router-a"
kind = "llamacpp-router"
context = 2048
slots = 2
autoload = true

[[node.model]]
id = "r-loaded"
status = "loaded"

[[node.model]]
id = "r-idle"

[[node]]
name = "ollama-a"
kind = "ollama"
context = 4096
load_time = "1ms"

[[node.model]]
id = "o-warm:latest"
status = "loaded"

[[node.model]]
id = "o-cold:latest"

[[node]]
name = "sglang-a"
kind = "sglang"
models = ["s-model"]
context = 16384
`;

/** What init must find at each sim node: the kind written, and the models with their figures. */
const EXPECTED: Readonly<Record<string, { kind: string; models: readonly string[] }>> = {
  'vllm-a': { kind: 'vllm', models: ['v-model  loaded, ctx 8192', 'v-lora   loaded, ctx 8192'] },
  'llamacpp-a': { kind: 'llamacpp', models: ['l-model  loaded, ctx 4096, 2 slots'] },
  'router-a': {
    kind: 'llamacpp',
    models: ['r-loaded  loaded, ctx 2048, 2 slots', 'r-idle    on demand, ctx unknown until loaded'],
  },
  'ollama-a': {
    kind: 'ollama',
    models: ['o-warm:latest  loaded, ctx 4096', 'o-cold:latest  on demand, ctx unknown until loaded'],
  },
  'sglang-a': { kind: 'sglang', models: ['s-model  loaded, ctx 16384'] },
};

let sim: SimFleet;
let generic: ListingNode;
let dir: { path: string; cleanup: () => Promise<void> };
let gateway: GatewayProcess | undefined;

before(async () => {
  sim = await startSimFleet(FLEET);
  generic = await startListingNode({
    listing: () => [{ id: 'g-model', object: 'model', created: 0, owned_by: 'acme' }],
    router: false,
  });
  dir = await writeTempFile('unused', '');
});

after(async () => {
  await gateway?.stop();
  await sim.close();
  await generic.close();
  await dir.cleanup();
});

async function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = startCli(args);
  if (proc.child.exitCode === null) await once(proc.child, 'exit');
  // Let readline hand over the last lines.
  await new Promise((resolve) => setImmediate(resolve));
  return { code: proc.child.exitCode, stdout: proc.lines.join('\n'), stderr: proc.stderr.join('\n') };
}

/** The config block (comments and table) init wrote for `url`. */
function blockFor(config: string, url: string): string {
  const block = config.split('\n\n').find((part) => part.includes(`url = "${url}"`));
  assert.ok(block !== undefined, `no block for ${url} in:\n${config}`);
  return block;
}

test('init detects every kind, writes a config serve runs, and each model found is routed to its node', async () => {
  const out = `${dir.path}-init.toml`;
  const dead = 'http://127.0.0.1:1';
  const urls = [...sim.nodes.map((node) => node.url), generic.url, dead];
  const result = await runCli(['init', ...urls, '--out', out, '--listen', '127.0.0.1:0', '--timeout', '5s']);
  // One URL did not answer: the config is written all the same, and the exit code says so.
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stdout, /not added {2}http:\/\/127\.0\.0\.1:1: did not answer/);
  const config = await readFile(out, 'utf8');

  for (const node of sim.nodes) {
    const expected = EXPECTED[node.name];
    assert.ok(expected !== undefined);
    const block = blockFor(config, node.url);
    assert.match(block, new RegExp(`^kind = "${expected.kind}"$`, 'm'), block);
    for (const line of expected.models) assert.ok(block.includes(`#   ${line}`), `${node.name}: no "${line}" in\n${block}`);
  }
  assert.match(blockFor(config, generic.url), /^kind = "openai"$/m);
  assert.match(blockFor(config, generic.url), /#   g-model {2}loaded, ctx unknown/);
  assert.match(blockFor(config, dead), /^# \[\[nodes\]\]\n# name = "node"\n# url = "http:\/\/127\.0\.0\.1:1"\n# kind = "auto"$/m);
  assert.match(blockFor(config, sim.url('router-a')), /^# llama\.cpp router \(GET \/props says role "router"\)$/m);

  // Nothing was loaded: the router was asked only GETs, /props about a model only with autoload=false.
  for (const recorded of sim.node('router-a').requests()) {
    assert.equal(recorded.method, 'GET', recorded.path);
    if (recorded.path === '/props' && recorded.query.model !== undefined) assert.equal(recorded.query.autoload, 'false');
  }
  assert.deepEqual(
    sim
      .node('ollama-a')
      .requests()
      .filter((r) => r.method !== 'GET'),
    [],
  );
  const routerListing = await httpJson('GET', `${sim.url('router-a')}/v1/models`);
  const idle = routerListing.json<{ data: { id: string; status: { value: string } }[] }>().data.find((m) => m.id === 'r-idle');
  assert.equal(idle?.status.value, 'unloaded');

  // check-config accepts it, and ends its summary with a newline.
  const check = await runCli(['check-config', out]);
  assert.equal(check.code, 0, check.stderr);
  assert.ok(loadConfig(config, {}).ok);

  // serve runs the written config; a request for each model found reaches the node that lists it.
  gateway = await startGatewayProcess(config);
  const nodeNames = new Map<string, string>();
  for (const match of config.matchAll(/^name = "([^"]+)"\nurl = "([^"]+)"/gm)) nodeNames.set(match[2] ?? '', match[1] ?? '');
  const modelsOf: [string, string][] = [
    ...sim.nodes.flatMap((node) => node.modelIds().map((id): [string, string] => [id, node.url])),
    ['g-model', generic.url],
  ];
  assert.equal(modelsOf.length, 9);
  const gatewayUrl = gateway.url;
  await untilEvent(
    async () => {
      const listed = (await httpJson('GET', `${gatewayUrl}/v1/models`)).json<{ data: { id: string }[] }>().data.map((m) => m.id);
      return modelsOf.every(([id]) => listed.includes(id));
    },
    [gateway.process.output],
    'every model discovered',
  );
  for (const [model, url] of modelsOf) {
    const res = await chat(gatewayUrl, model);
    assert.equal(res.status, 200, `${model}: ${res.text}`);
    assert.equal(servedBy(res), nodeNames.get(url), model);
  }
  assert.equal(generic.completions()['g-model'], 1);
});

test('init --out refuses to overwrite a file without --force', async () => {
  const out = `${dir.path}-existing.toml`;
  await writeFile(out, '# mine\n');
  const refused = await runCli(['init', generic.url, '--out', out]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /already exists; add --force to overwrite it/);
  assert.equal(await readFile(out, 'utf8'), '# mine\n');
  const forced = await runCli(['init', generic.url, '--out', out, '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(await readFile(out, 'utf8'), /^kind = "openai"$/m);
});

test('init --out - prints the config on stdout and the report on stderr; a bad URL is a usage error', async () => {
  const printed = await runCli(['init', generic.url.replace('http://', ''), '--out', '-']);
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /^\[\[nodes\]\]\nname = "openai"\nurl = "http:\/\/127\.0\.0\.1:\d+"\nkind = "openai"$/m);
  assert.match(printed.stderr, /^node openai {2}openai {2}http:\/\/127\.0\.0\.1:\d+/m);
  const bad = await runCli(['init', 'ftp://example.test']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /switchyard init: ftp:\/\/example\.test: must be an http\(s\) URL/);
});
