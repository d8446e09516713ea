// Transition logs (issue 3): exactly one line per state change of a node's model listing, none
// while it merely repeats, and the "configured model not served by node" warning once per
// (node, model) per list change.
//
// The sim's model lists are fixed (faults only empty or break them), so a list that *changes* needs
// a node whose list the test can edit: a minimal vLLM-shaped server on 127.0.0.1:0, below.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { startGateway, type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import {
  chat,
  discoveryLogCounts,
  gatewayConfig,
  logMark,
  logsOf,
  modelState,
  servedBy,
  waitForNode,
} from '#test/fixtures/gateway-state.ts';
import { untilEvent } from '#test/fixtures/events.ts';
import { listings } from '#test/fixtures/gateway-waits.ts';

type ListMode = 'list' | 'error500' | 'garbage';

/** A node whose `GET /v1/models` answers whatever the test set last, counting the requests. */
interface EditableNode {
  readonly url: string;
  listings(): number;
  set(mode: ListMode, ids?: readonly string[]): void;
  close(): Promise<void>;
}

async function startEditableNode(initial: readonly string[]): Promise<EditableNode> {
  let mode: ListMode = 'list';
  let ids: readonly string[] = initial;
  let listings = 0;
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      listings += 1;
      if (mode === 'error500') res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
      else if (mode === 'garbage') res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
      else {
        const data = ids.map((id) => ({ id, object: 'model', owned_by: 'vllm', max_model_len: 4096 }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
      }
      return;
    }
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      req.resume();
      req.on('end', () => {
        const body = {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    listings: () => listings,
    set(nextMode, nextIds) {
      mode = nextMode;
      if (nextIds !== undefined) ids = nextIds;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

const FAIL_THRESHOLD = 3;

let node: EditableNode;
let gw: GatewayUnderTest;

before(async () => {
  node = await startEditableNode(['a']);
  gw = await startGateway(
    gatewayConfig({
      health: { interval: '100ms', timeout: '2s', failThreshold: FAIL_THRESHOLD },
      discovery: { interval: '100ms', timeout: '3s' },
      nodes: [{ name: 'ed', url: node.url, kind: 'vllm' }],
      // Declared without a group, so the ungrouped node "ed" should serve it.
      extra: '[[models.available]]\nname = "wanted"',
    }),
  );
  await waitForNode(gw, 'ed', modelState('known'), 'known');
});

after(async () => {
  await gw?.close();
  await node?.close();
});

/** Waits until the node has been listed `rounds` more times and the gateway has taken the last one in. */
async function moreRounds(rounds: number): Promise<void> {
  const target = node.listings() + rounds + 1;
  await untilEvent(() => node.listings() >= target, [listings(gw)], `${rounds} more listings`);
}

const warnings = (mark: number): unknown[] => logsOf(gw, 'ed', 'configured model not served by node', mark).map((l) => l.model);

test('a changed list logs "node model list changed" once with what was added and removed, and nothing while it stays put', async () => {
  assert.deepEqual(discoveryLogCounts(gw, 'ed'), { 'models discovered': 1, 'configured model not served by node': 1 });
  assert.deepEqual(warnings(0), ['wanted']);
  let mark = logMark(gw);
  await moreRounds(3);
  assert.deepEqual(discoveryLogCounts(gw, 'ed', mark), {}, 'an unchanged list logs nothing');

  const steps = [
    { ids: ['a', 'b'], added: ['b'], removed: [], warned: ['wanted'] },
    { ids: ['wanted', 'b'], added: ['wanted'], removed: ['a'], warned: [] },
    { ids: ['b'], added: [], removed: ['wanted'], warned: ['wanted'] },
  ];
  for (const step of steps) {
    mark = logMark(gw);
    node.set('list', step.ids);
    await waitForNode(
      gw,
      'ed',
      (d) => [...d.models.names].sort().join() === [...step.ids].sort().join(),
      `lists ${step.ids.join()}`,
    );
    await moreRounds(3);
    const changes = logsOf(gw, 'ed', 'node model list changed', mark);
    assert.equal(changes.length, 1, step.ids.join());
    assert.deepEqual([changes[0]?.added, changes[0]?.removed], [step.added, step.removed], step.ids.join());
    assert.deepEqual(warnings(mark), step.warned, `warnings after ${step.ids.join()}`);
    const counts = discoveryLogCounts(gw, 'ed', mark);
    assert.equal(
      Object.values(counts).reduce((a, b) => a + b, 0),
      1 + step.warned.length,
      JSON.stringify(counts),
    );
  }

  // Routing follows the list exactly.
  assert.equal(servedBy(await chat(gw.url, 'b')), 'ed');
  assert.equal((await chat(gw.url, 'a')).status, 404, 'no longer listed by the only node: unknown');
});

test('a node that fails, expires, recovers, goes empty and comes back logs exactly one line per transition', async () => {
  node.set('list', ['a']);
  await waitForNode(gw, 'ed', (d) => d.models.names.join() === 'a', 'lists a');
  const mark = logMark(gw);

  node.set('error500');
  await waitForNode(gw, 'ed', modelState('expired'), 'expired');
  await moreRounds(3);
  node.set('list', ['a']);
  await waitForNode(gw, 'ed', modelState('known'), 'recovered');
  node.set('garbage');
  await waitForNode(gw, 'ed', modelState('degraded'), 'degraded');
  node.set('list', ['a']);
  await waitForNode(gw, 'ed', modelState('known'), 'recovered');
  node.set('list', []);
  await waitForNode(gw, 'ed', modelState('known_empty'), 'known_empty');
  await moreRounds(3);
  node.set('list', ['a']);
  await waitForNode(gw, 'ed', modelState('known'), 'known');
  await moreRounds(2);

  const lines = gw
    .logs()
    .slice(mark)
    .filter((l) => l.node === 'ed' && l.msg !== 'configured model not served by node')
    .map((l) => l.msg);
  assert.deepEqual(lines, [
    'model discovery failed',
    'model discovery expired',
    'model discovery recovered',
    'model discovery failed',
    'model discovery recovered',
    'node reports no models',
    'models discovered',
  ]);
  const expired = logsOf(gw, 'ed', 'model discovery expired', mark)[0];
  assert.match(String(expired?.error), /HTTP 500/);
  assert.equal(expired?.level, 40, 'warn');
  assert.equal(logsOf(gw, 'ed', 'model discovery recovered', mark)[0]?.level, 30, 'info');
});
