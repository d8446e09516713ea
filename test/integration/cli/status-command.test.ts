// `switchyard status` as an operator or a cron job runs it: the real CLI process against a gateway
// (in this process) whose fleet has one dead node. The table, and the exit code scripts read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startFleetAndGateway, type FleetAndGateway } from '#test/fixtures/in-process-fleet.ts';
import { httpJson, setSimFaults } from '#test/fixtures/http.ts';
import { gatewayConfig } from '#test/fixtures/gateway-state.ts';
import type { HostsReport, HostView } from '#src/admin/index.ts';
import { startCli, type RunningProcess } from '#test/fixtures/processes.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { nodeChanges } from '#test/fixtures/gateway-waits.ts';

const TOKEN = 'status-test-admin-token';
const FLEET = `
[[node]]
name = "vllm-a"
kind = "vllm"
models = ["llama-3.1-8b"]

[[node]]
name = "router-b"
kind = "llamacpp-router"
models = ["gemma-3-4b", "qwen3-8b"]

[[node]]
name = "ollama-c"
kind = "ollama"
models = ["llama3.2:latest"]
`;

let fleet: FleetAndGateway;

before(async () => {
  fleet = await startFleetAndGateway(FLEET, (sim) =>
    gatewayConfig({
      health: { interval: '100ms', timeout: '5s', failThreshold: 2 },
      discovery: { interval: '200ms', timeout: '5s' },
      nodes: sim.nodes.map((n) => ({ name: n.name, url: n.url, kind: n.kind === 'llamacpp-router' ? 'llamacpp' : n.kind })),
      extra: `[admin]\ntoken = "${TOKEN}"\n`,
    }),
  );
  await waitForHost(
    'vllm-a',
    (h) => h.discovery.state === 'known' && Object.keys(h.models).length > 0,
    'known, its context polled',
  );
  await waitForHost(
    'router-b',
    (h) => h.discovery.state === 'known' && h.switch_queue !== undefined,
    'known, its switch queue decided',
  );
  await setSimFaults(fleet.sim.url('ollama-c'), { health: 'fail' });
  await waitForHost('ollama-c', (h) => h.health.status === 'dead', 'dead');
});

/** Polls /admin/hosts (with the admin token) until the node's entry satisfies `check`. */
async function waitForHost(name: string, check: (host: HostView) => boolean, what: string): Promise<void> {
  await untilEvent(
    async () => {
      const res = await httpJson('GET', `${fleet.gw.url}/admin/hosts`, undefined, { authorization: `Bearer ${TOKEN}` });
      const host = res.json<HostsReport>().hosts.find((h) => h.name === name);
      return host !== undefined && check(host);
    },
    [nodeChanges(fleet.gw)],
    `${name}: ${what}`,
  );
}

after(async () => {
  await fleet?.close();
});

/** Runs the CLI to its exit (bounded) and returns its exit code and output. */
async function runToExit(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; process: RunningProcess }> {
  const cli = startCli(args, env);
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      cli.child.kill('SIGKILL');
      reject(new Error(`switchyard ${args.join(' ')} did not exit; stdout: ${cli.lines.join('\n')}`));
    }, 120_000);
    cli.child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  // Let the last lines through readline.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, process: cli };
}

const row = (lines: readonly string[], node: string): string[] =>
  lines.find((l) => l.startsWith(`${node} `))?.split(/ {2,}/) ?? [];

test('a fleet with one dead node: one line per node, and exit code 1', async () => {
  const { code, process } = await runToExit(['status', '--url', fleet.gw.url, '--token', TOKEN]);
  assert.equal(code, 1, process.stderr.join('\n'));
  const lines = process.lines;
  assert.match(lines[0] ?? '', /^switchyard status {2}http:\/\/127\.0\.0\.1:\d+ {2}\d{4}-\d\d-\d\dT/);
  assert.equal(lines[1], '3 nodes: 2 healthy, 0 degraded, 1 dead; 0 requests queued');
  assert.match(lines[3] ?? '', /^NODE +KIND +HEALTH +DISCOVERY +LOADED\/ON-DEMAND +CTX +SLOTS +QUEUE +LAST ERROR$/);
  assert.equal(lines.length, 9, lines.join('\n'));
  assert.equal(lines[7], '');
  assert.match(
    lines[8] ?? '',
    /^router-b: switch queue held by the (router|gateway) — \S/,
    "who holds the router's switch queue, and why",
  );
  assert.deepEqual(row(lines, 'vllm-a').slice(0, 5), ['vllm-a', 'vllm', 'healthy', 'known', '1/0']);
  assert.match(row(lines, 'vllm-a')[5] ?? '', /^\d+$/, "the loaded model's context");
  const router = row(lines, 'router-b');
  assert.deepEqual(router.slice(0, 4), ['router-b', 'llamacpp', 'healthy', 'known']);
  assert.equal(router[4], '0/2', 'a router that has loaded nothing yet: both models on demand');
  const dead = row(lines, 'ollama-c');
  assert.deepEqual(dead.slice(0, 3), ['ollama-c', 'ollama', 'dead']);
  assert.ok((dead[8] ?? '').length > 0, `the dead node shows its last error: ${lines.join('\n')}`);
});

test('the token may come from SWITCHYARD_ADMIN_TOKEN; without it the gateway refuses and the exit code is 3', async () => {
  const fromEnv = await runToExit(['status', `--url=${fleet.gw.url}`], { SWITCHYARD_ADMIN_TOKEN: TOKEN });
  assert.equal(fromEnv.code, 1);
  const refused = await runToExit(['status', '--url', fleet.gw.url], { SWITCHYARD_ADMIN_TOKEN: '' });
  assert.equal(refused.code, 3);
  assert.match(
    refused.process.stderr.join('\n'),
    /HTTP 401: the gateway refused the admin request \(pass the admin token with --token/,
  );
});

test('a gateway that is down: exit code 3 and a message naming the address', async () => {
  const port = await closedPort();
  const { code, process } = await runToExit(['status', '--url', `http://127.0.0.1:${port}`]);
  assert.equal(code, 3);
  assert.match(process.stderr.join('\n'), new RegExp(`cannot read http://127\\.0\\.0\\.1:${port}/admin/hosts: .*ECONNREFUSED`));
});

test('a bad argument is a usage error (exit 2); --help prints the usage (exit 0)', async () => {
  const bad = await runToExit(['status', '--url', 'not a url']);
  assert.equal(bad.code, 2);
  assert.match(bad.process.stderr.join('\n'), /--url 'not a url' is not a URL/);
  const help = await runToExit(['status', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.process.lines.join('\n'), /usage: switchyard status \[--url GATEWAY\] \[--token T\] \[--watch\]/);
});

test('--watch redraws until Ctrl-C', async () => {
  const cli = startCli(['status', '--url', fleet.gw.url, '--token', TOKEN, '--watch']);
  try {
    await cli.waitForLine((l) => l.startsWith('ollama-c '));
    // A second heading comes after a clear-screen: a redraw, about a second later.
    await cli.waitForLine(() => cli.lines.filter((l) => l.includes('switchyard status  ')).length >= 2, 60_000);
    assert.ok(
      cli.lines.some((l) => l.startsWith('\x1b[H\x1b[2J')),
      'each redraw clears the screen first',
    );
  } finally {
    assert.equal(await cli.stop('SIGINT'), 1, 'the last exit code: a node is dead');
  }
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : 0;
}
