// Issue 43 item 7: `switchyard check-config` as an operator runs it (a real process). A file with
// mistakes in every section — values the schema refuses and entries that clash with each other
// (duplicate node, model and tenant names among them) — is answered with every problem in one run,
// not the schema's first and the duplicates only once those are fixed. A full valid config's
// summary has a line for every section it sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLI = new URL('../../../bin/switchyard.js', import.meta.url).pathname;

async function checkConfig(
  text: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-check-config-'));
  const file = join(dir, 'switchyard.toml');
  try {
    await writeFile(file, text);
    const child = spawn(process.execPath, [CLI, 'check-config', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    try {
      const [code] = (await once(child, 'close')) as [number | null];
      return { code, stdout, stderr, file };
    } finally {
      clearTimeout(killer);
      child.kill('SIGKILL');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const MISTAKES = `
[server]
listen = "localhost:http"
max_request_body_bytes = "lots"
colour = "blue"

[health]
interval = "soon"

[discovery]
timeout = -1

[upstream]
connect_timeout = "x"

[routing]
policy = "fastest"

[[nodes]]
name = "gpu"
url = "http://10.0.0.1:8000"
kind = "vlm"

[[nodes]]
name = "gpu"
url = "http://10.0.0.2:8000"

[[nodes]]
name = "cpu"

[models]
default = "unknown-model"

[[models.available]]
name = "llama"
group = "nowhere"

[[models.available]]
name = "llama"
warm = -1

[[tenants]]
name = "team"
keys = ["k1"]
requests_per_minute = 0
sites = ["elsewhere"]

[[tenants]]
name = "team"
keys = ["k1"]

[log]
requests = ""

[tracing]
otlp_endpoint = "http://collector:4318/v1/traces"
sample_ratio = 2

[cluster]
store = "http://x"

[mesh]
site = "a"
url = "http://10.0.0.9:8080"
key_file = "/etc/switchyard/site.key"
listen = ["/ip4/0.0.0.0/tcp/4001"]
heartbeat = "10s"
freshness = "5s"

[[mesh.sites]]
id = "b"
public_key = "bad"

[[mesh.sites]]
id = "b"
public_key = "also-bad"
`;

/** Every problem the file holds: its key path and what the line says. */
const EXPECTED: readonly (readonly [string, RegExp])[] = [
  ['server.listen', /must be "host:port"/],
  ['server.max_request_body_bytes', /must be a size in bytes/],
  ['server.colour', /unknown key/],
  ['health.interval', /must be a duration/],
  ['discovery.timeout', /must be a duration/],
  ['upstream.connect_timeout', /must be a duration/],
  ['routing.policy', /must be one of/],
  ['nodes[0].kind', /must be one of/],
  ['nodes[1].name', /duplicate node name "gpu" \(also nodes\[0\]\)/],
  ['nodes[2].url', /is required/],
  ['models.default', /"unknown-model" is not the name or alias of any/],
  ['models.available[0].group', /no node has group "nowhere"/],
  ['models.available[1].name', /duplicate model name "llama"/],
  ['models.available[1].warm', /must be 0 or more/],
  ['tenants[0].requests_per_minute', /must be a whole number of at least 1/],
  ['tenants[0].sites[0]', /site "elsewhere" is not pinned/],
  ['tenants[1].name', /duplicate tenant name "team"/],
  ['tenants[1].keys', /also held by tenants\[0\] \("team"\)/],
  ['log.requests', /must be "off", "stdout"/],
  ['tracing.sample_ratio', /must be a number from 0 to 1/],
  ['cluster.store', /must start with redis:\/\//],
  ['mesh.freshness', /must be longer than heartbeat/],
  ['mesh.sites[0].public_key', /must be a raw 32-byte Ed25519 public key/],
  ['mesh.sites[1].public_key', /must be a raw 32-byte Ed25519 public key/],
  ['mesh.sites[1].id', /site "b" is pinned twice/],
];

test('check-config lists every problem of every section in one run, the duplicates among them', async () => {
  const run = await checkConfig(MISTAKES);
  assert.equal(run.code, 1, run.stderr);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.at(-1), `${EXPECTED.length} problems in ${run.file}`);
  const problems = lines.slice(0, -1);
  for (const [path, message] of EXPECTED) {
    const line = problems.find((l) => l.startsWith(`${path}: `));
    assert.ok(line !== undefined, `no problem at ${path} in:\n${run.stderr}`);
    assert.match(line, message, path);
  }
  assert.equal(problems.length, EXPECTED.length, `one line per problem, none twice:\n${run.stderr}`);
  const sections = new Set(EXPECTED.map(([path]) => path.split(/[.[]/)[0]));
  assert.ok(sections.size >= 12, `mistakes in ${sections.size} sections`);
  assert.ok(!run.stderr.includes('k1'), 'a tenant key is never printed');
});

const KEY_B = Buffer.alloc(32, 7).toString('base64url');
const KEY_A = Buffer.alloc(32, 9).toString('base64url');

const FULL = `
[server]
listen = "0.0.0.0:8080"
api_keys = ["sk-legacy-key"]
state_dir = "/var/lib/switchyard"
workers = 2

[admin]
listen = "127.0.0.1:9090"
token = "env:ADMIN_TOKEN"

[health]
interval = "4s"

[discovery]
interval = "20s"

[load]
interval = "3s"

[upstream]
connect_timeout = "2s"

[routing]
policy = "least-loaded"

[[nodes]]
name = "gpu-a"
url = "http://10.0.0.5:8000"
kind = "vllm"
group = "big"

[[nodes]]
name = "gpu-b"
url = "http://10.0.0.6:8080"
kind = "llamacpp"
group = "big"

[models]
default = "llama"

[[models.available]]
name = "llama"
group = "big"
pin = true
warm = 2

[[models.available]]
name = "qwen"
preload = true

[[tenants]]
name = "team-a"
keys = ["sk-team-a"]
priority = "interactive"
max_concurrent = 4
requests_per_minute = 600
tokens_per_minute = 20000
tokens_per_day = 1000000

[log]
requests = "/var/log/switchyard/requests.jsonl"

[tracing]
otlp_endpoint = "http://127.0.0.1:4318/v1/traces"
sample_ratio = 0.25

[cluster]
store = "redis://127.0.0.1:6379/0"
password = "env:STORE_PASSWORD"
replica = "r1"

[mesh]
site = "a"
url = "http://10.0.0.9:8080"
key_file = "/etc/switchyard/site.key"
listen = ["/ip4/0.0.0.0/tcp/4001"]

[[mesh.sites]]
id = "a"
public_key = "${KEY_A}"

[[mesh.sites]]
id = "b"
public_key = "${KEY_B}"
`;

test('the summary of a full valid config has a line for every section it sets, and prints no secret', async () => {
  const run = await checkConfig(FULL, { ADMIN_TOKEN: 'admin-secret-token', STORE_PASSWORD: 'store-secret' });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, '');
  const out = run.stdout;
  const lines: readonly (readonly [string, RegExp])[] = [
    ['server', /^listen: 0\.0\.0\.0:8080 .*2 workers.*1 api key.*state_dir \/var\/lib\/switchyard$/m],
    ['admin', /^admin: on 127\.0\.0\.1:9090, token set$/m],
    ['nodes', /^nodes \(2\):\n {2}gpu-a {2}vllm .*\(group big\)\n {2}gpu-b {2}llamacpp/m],
    [
      'models',
      /^models: default llama; 2 declared:\n {2}llama {2}\(group big; pinned; warm on 2 nodes\)\n {2}qwen {2}\(preloaded\)$/m,
    ],
    ['pins, preloads, warm counts', /^model states: 1 pin, 1 preload, 2 warm nodes asked/m],
    ['health', /^health: every 4s,/m],
    ['discovery', /^discovery: every 20s,/m],
    ['load', /^load: every 3s,/m],
    ['upstream', /^upstream: connect timeout 2s,/m],
    ['routing', /^routing: policy least-loaded,/m],
    [
      'tenants',
      /^tenants \(2\):\n {2}team-a {2}1 key, interactive \(weight 1\), every model; limits: 4 at once, 600 requests\/min, 20000 tokens\/min, 1000000 tokens\/day\n {2}default {2}1 key, standard/m,
    ],
    [
      'request log',
      /^request log: to \/var\/log\/switchyard\/requests\.jsonl, rotated at 100MiB keeping 5 files, no prompt text$/m,
    ],
    ['tracing', /^tracing: OTLP to http:\/\/127\.0\.0\.1:4318\/v1\/traces as switchyard, sampling 25% of traces$/m],
    ['mesh', /^mesh: site a at http:\/\/10\.0\.0\.9:8080, .*2 pinned sites \(a, b\)/m],
    ['cluster', /^cluster: store redis:\/\/127\.0\.0\.1:6379\/0 \(password set\), replica r1, lease 10s, prefix switchyard:$/m],
  ];
  for (const [section, line] of lines) assert.match(out, line, `${section} in:\n${out}`);
  for (const secret of ['sk-legacy-key', 'sk-team-a', 'admin-secret-token', 'store-secret'])
    assert.ok(!out.includes(secret), `${secret} is never printed`);
});
