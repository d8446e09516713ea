// Contract: every server kind, asked the way its module says, reads a simulated node of that kind
// (and `auto` every node, `openai` any OpenAI-compatible one) with the same properties: the probe
// passes asking only the kind's health paths, the listing holds the node's models, capacity figures
// agree with the node's own and asking never loads a model, a tokenizer request counts like the
// node does, a refusal the node sends is read for what it means, and its detector (switchyard init)
// recognises the node without loading anything, and it resolves a request's model name as the node
// does (each name it takes reaches a listed id the node answers for; a name it refuses, a node that
// refuses unknown names refuses too). What the gateway asks of a kind instead of its name: the
// listing entries read as the node lists them, the GETs of its load answer its load gauges without
// loading a model, and its KV pool is the one the node runs (llama-servers only).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent } from 'undici';
import { FIRST_ROUND, fetchCapacity, type NodeCapacity } from '#src/capacity/index.ts';
import type { NodeKind, NodeSpec } from '#src/config/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { isRecord } from '#src/core/is-record.ts';
import { fetchModelList, type DiscoveredModel } from '#src/discovery/index.ts';
import { readLoadFigures, serverKind, tokenizerFor, type ServerRole } from '#src/kinds/index.ts';
import { probeNode } from '#src/nodes/index.ts';
import { countTokens, parseFleetConfig, startFleet, type Fleet, type SimKind, type SimNode } from '#src/sim/index.ts';
import { spec } from '#test/fixtures/builders.ts';

const CONTEXT = 64;
const FLEET_TOML = `
[[node]]
name = "vllm"
kind = "vllm"
context = ${CONTEXT}

[[node.model]]
id = "model-v"
aliases = ["model-v-second-name"]

[[node]]
name = "llamacpp"
kind = "llamacpp"
context = ${CONTEXT}
slots = 2
metrics = true

[[node.model]]
id = "model-l"
aliases = ["model-l-alias"]

[[node]]
name = "llamacpp-router"
kind = "llamacpp-router"
context = ${CONTEXT}
slots = 2
autoload = true
metrics = true

[[node.model]]
id = "r-loaded"
aliases = ["r-alias"]
status = "loaded"

[[node.model]]
id = "r-idle"
status = "unloaded"

[[node]]
name = "ollama"
kind = "ollama"
context = ${CONTEXT}

[[node.model]]
id = "warm:latest"
status = "loaded"

[[node.model]]
id = "cold:latest"

[[node]]
name = "sglang"
kind = "sglang"
models = ["model-s"]
context = ${CONTEXT}
metrics = true
`;

/** Which simulated nodes each kind is run against. */
const PAIRS: Readonly<Record<NodeKind, readonly SimKind[]>> = {
  vllm: ['vllm'],
  llamacpp: ['llamacpp', 'llamacpp-router'],
  ollama: ['ollama'],
  sglang: ['sglang'],
  // Any OpenAI-compatible server: only the standard surface is used.
  openai: ['vllm', 'sglang'],
  auto: ['vllm', 'llamacpp', 'llamacpp-router', 'ollama', 'sglang'],
};

/**
 * Which refusals each simulated node sends (PROTOCOLS.md §6.1): Ollama truncates an overlong chat
 * prompt, and a single llama-server and SGLang answer any model name with their own model.
 */
const REFUSES: Readonly<Record<SimKind, { readonly overlong: boolean; readonly unknownModel: boolean }>> = {
  vllm: { overlong: true, unknownModel: true },
  llamacpp: { overlong: true, unknownModel: false },
  'llamacpp-router': { overlong: true, unknownModel: true },
  ollama: { overlong: false, unknownModel: true },
  sglang: { overlong: true, unknownModel: false },
};

/** What `auto`'s detector (switchyard init) reads each simulated node as. */
const DETECTED: Readonly<Record<SimKind, { readonly kind: NodeKind; readonly role: ServerRole }>> = {
  vllm: { kind: 'vllm', role: 'unknown' },
  llamacpp: { kind: 'llamacpp', role: 'single' },
  'llamacpp-router': { kind: 'llamacpp', role: 'router' },
  ollama: { kind: 'ollama', role: 'unknown' },
  sglang: { kind: 'sglang', role: 'unknown' },
};

/** Which simulated nodes export load gauges on /metrics (Ollama has none), and which are llama-servers. */
const EXPORTS_LOAD: Readonly<Record<SimKind, boolean>> = { vllm: true, llamacpp: true, 'llamacpp-router': true, ollama: false, sglang: true };
const LLAMA_SERVER: Readonly<Record<SimKind, boolean>> = { vllm: false, llamacpp: true, 'llamacpp-router': true, ollama: false, sglang: false };

/** The models the fleet lists as not loaded (a router's `status`). */
const UNLOADED = new Set(['r-idle']);

const TIMEOUT_MS = 5000;
const MAX_BYTES = 1024 * 1024;
const OVERLONG_PROMPT = 'word '.repeat(CONTEXT * 4);

describe('every server kind against a simulated node of that kind', () => {
  let fleet: Fleet;
  const dispatcher = new Agent();
  before(async () => {
    const parsed = parseFleetConfig(FLEET_TOML);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    fleet = await startFleet(parsed.spec, { host: '127.0.0.1' });
  });
  after(async () => {
    await fleet.close();
    await dispatcher.close();
  });

  const simNode = (simKind: SimKind): SimNode => {
    const node = fleet.nodes.find((n) => n.kind === simKind);
    assert.ok(node, simKind);
    return node;
  };
  const nodeSpec = (kind: NodeKind, node: SimNode): NodeSpec => spec(`${kind}-on-${node.name}`, { url: node.url, kind });
  const listing = async (node: NodeSpec): Promise<readonly DiscoveredModel[]> => {
    const result = await fetchModelList(node, { dispatcher, timeoutMs: TIMEOUT_MS, maxBodyBytes: MAX_BYTES });
    assert.ok(result.ok, JSON.stringify(result));
    return result.models;
  };
  const capacityOf = async (node: NodeSpec, models: readonly DiscoveredModel[]): Promise<NodeCapacity> =>
    (await fetchCapacity(node, models, { dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES, requestsPerPoll: 8, round: FIRST_ROUND })).capacity;
  const loadedNow = async (node: NodeSpec): Promise<string[]> => {
    const models = await listing(node);
    const capacity = await capacityOf(node, models);
    return [...(capacity.loadedIds ?? models.filter((m) => m.loaded).map((m) => m.id))].sort();
  };
  const chat = (node: SimNode, model: string, content: string) =>
    requestBoundedJson(`${node.url}/v1/chat/completions`, {
      dispatcher, method: 'POST', timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES,
      body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 1 }),
    });

  for (const [kind, simKinds] of Object.entries(PAIRS) as [NodeKind, readonly SimKind[]][]) {
    for (const simKind of simKinds) {
      describe(`${kind} on a ${simKind} node`, () => {
        test('the probe passes, asking only the kind\'s health paths', async () => {
          const node = simNode(simKind);
          node.clearRecording();
          const outcome = await probeNode(nodeSpec(kind, node), { dispatcher, timeoutMs: TIMEOUT_MS, monotonicMs: () => performance.now() });
          assert.equal(outcome.ok, true, JSON.stringify(outcome));
          const asked = node.requests().map((r) => r.path);
          assert.ok(asked.length > 0 && asked.every((path) => serverKind(kind).healthPaths.includes(path)), asked.join(' '));
        });

        test('the listing holds exactly the node\'s models', async () => {
          const node = simNode(simKind);
          const models = await listing(nodeSpec(kind, node));
          assert.deepEqual(models.map((m) => m.id).sort(), [...node.modelIds()].sort());
        });

        test('capacity figures agree with the node\'s, and asking loads nothing', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const loadedBefore = await loadedNow(target);
          node.clearRecording();
          const capacity = await capacityOf(target, await listing(target));
          const asked = node.requests().filter((r) => r.path !== '/v1/models');
          if (serverKind(kind).capacity === undefined) {
            assert.equal(capacity.role, 'unknown');
            assert.deepEqual(capacity.models, {});
            assert.deepEqual(asked, [], 'a kind with no capacity request asks nothing');
          }
          for (const figures of [capacity.host, ...Object.values(capacity.models)]) {
            if (figures !== undefined) assert.equal(figures.nCtx, CONTEXT, JSON.stringify(capacity));
          }
          for (const id of Object.keys(capacity.models)) assert.ok(loadedBefore.includes(id), `${id} has figures but is not loaded`);
          assert.deepEqual(await loadedNow(target), loadedBefore);
        });

        test('a tokenizer request, where the kind has one, counts like the node and loads nothing', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const models = await listing(target);
          const dialect = tokenizerFor(kind, (await capacityOf(target, models)).role);
          if (dialect === undefined) return;
          const loadedBefore = await loadedNow(target);
          const model = loadedBefore[0];
          assert.ok(model !== undefined, 'a loaded model to count with');
          const text = 'How many tokens, exactly? Count: 1, 2, 3.';
          const request = dialect.request(model, text);
          const answer = await requestBoundedJson(node.url + request.path, {
            dispatcher, method: 'POST', body: JSON.stringify(request.body), timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES,
          });
          assert.ok(answer.ok && answer.status === 200, JSON.stringify(answer));
          assert.equal(dialect.count(answer.body), countTokens(text));
          assert.deepEqual(await loadedNow(target), loadedBefore);
        });

        test('a refusal the node sends is read for what it means', async () => {
          const node = simNode(simKind);
          const loaded = await loadedNow(nodeSpec(kind, node));
          const model = loaded[0];
          assert.ok(model !== undefined);
          const overlong = await chat(node, model, OVERLONG_PROMPT);
          assert.ok(overlong.ok, JSON.stringify(overlong));
          assert.equal(overlong.status === 400, REFUSES[simKind].overlong, `overlong prompt: HTTP ${overlong.status}`);
          const overflow = serverKind(kind).refusal(overlong.status, overlong.body);
          assert.equal(overflow?.kind, REFUSES[simKind].overlong ? 'context_overflow' : undefined, JSON.stringify(overlong.body));
          const unknown = await chat(node, 'no-such-model', 'hi');
          assert.ok(unknown.ok, JSON.stringify(unknown));
          assert.equal(unknown.status >= 400, REFUSES[simKind].unknownModel, `unknown model: HTTP ${unknown.status}`);
          const notFound = serverKind(kind).refusal(unknown.status, unknown.body);
          assert.equal(notFound?.kind, REFUSES[simKind].unknownModel ? 'model_not_found' : undefined, JSON.stringify(unknown.body));
        });

        test('it resolves model names as the node does, to an id the node listed', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const models = await listing(target);
          const byId = new Map(models.map((m) => [m.id, m]));
          const loaded = new Set(await loadedNow(target));
          // Every id and alias, Ollama's short form of a `:latest` id, and names no node lists.
          const names = [
            ...models.flatMap((m) => [m.id, ...m.aliases, ...(m.id.endsWith(':latest') ? [m.id.slice(0, -':latest'.length)] : [])]),
            'no-such-model', 'no-such-model:latest',
          ];
          for (const name of names) {
            const resolved = serverKind(kind).resolveModelName(name, byId);
            if (resolved !== undefined) assert.ok(byId.has(resolved), `${name} → ${resolved}, which the node does not list`);
            // Only names of loaded models are asked (asking for another would load it).
            if (resolved !== undefined && !loaded.has(resolved)) continue;
            if (resolved === undefined && !REFUSES[simKind].unknownModel) continue;
            const answer = await chat(node, name, 'hi');
            assert.ok(answer.ok, JSON.stringify(answer));
            assert.equal(answer.status === 200, resolved !== undefined, `${kind} resolves ${name} to ${String(resolved)}; the node answered ${answer.status}`);
            if (resolved === undefined) continue;
            const sent = await chat(node, resolved, 'hi');
            assert.ok(sent.ok && sent.status === 200, `the listed id ${resolved} is answered: ${JSON.stringify(sent)}`);
          }
          assert.equal(serverKind(kind).resolveModelName('no-such-model', byId), undefined);
        });

        test('it reads each listing entry as the node lists it', async () => {
          const node = simNode(simKind);
          const raw = await requestBoundedJson(`${node.url}/v1/models`, { dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
          assert.ok(raw.ok && raw.status === 200, JSON.stringify(raw));
          const body = serverKind(kind).normalizeListing(raw.body);
          const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
          assert.equal(data.length, node.modelIds().length);
          for (const entry of data) {
            assert.ok(isRecord(entry) && typeof entry.id === 'string');
            const read = serverKind(kind).listingEntry(entry, entry.id);
            assert.equal(read.loaded, !UNLOADED.has(entry.id), `${entry.id}: ${JSON.stringify(read)}`);
            assert.ok(read.contextTokens === undefined || read.contextTokens === CONTEXT, `${entry.id}: ${JSON.stringify(read)}`);
            assert.ok(!read.aliases.includes(entry.id), 'an id is not its own alias');
          }
        });

        test('the GETs of its load answer its load gauges, and asking loads nothing', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const server = serverKind(kind);
          const models = await listing(target);
          const { role } = await capacityOf(target, models);
          const loadedBefore = await loadedNow(target);
          const paths = server.loadPaths(role, loadedBefore);
          if (server.load === undefined) {
            assert.equal(paths, undefined, 'a kind with no load gauges asks nothing');
            return;
          }
          assert.ok(paths !== undefined && paths.length > 0, `after a capacity poll (role ${role}) there is something to ask`);
          if (!EXPORTS_LOAD[simKind]) return;
          for (const path of paths) {
            const answer = await requestBoundedText(node.url + path, { dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES });
            assert.ok(answer.ok && answer.status === 200, `${path}: ${JSON.stringify(answer)}`);
            assert.ok(readLoadFigures(answer.text, server.load) !== undefined, `${path}: no load gauges`);
          }
          assert.deepEqual(await loadedNow(target), loadedBefore);
        });

        test('its KV pool is the node\'s: budgeted on a llama-server, none where the server manages its cache', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const { role } = await capacityOf(target, await listing(target));
          const pool = serverKind(kind).kvPool(role);
          // llama.cpp always has one; `auto` once the node answered /props as a llama-server; the others never here.
          const expected = kind === 'llamacpp' || (kind === 'auto' && LLAMA_SERVER[simKind]);
          assert.equal(pool !== undefined, expected, `${kind} on ${simKind}, role ${role}`);
          if (pool === undefined) return;
          for (const mode of ['unified', 'per-slot'] as const) {
            const figures = { nCtx: CONTEXT, slots: 2, mode };
            const guaranteed = pool.guaranteedCtx(figures);
            assert.ok(guaranteed > 0 && guaranteed <= CONTEXT, `${mode}: guaranteed ${guaranteed}`);
            assert.ok((pool.budget(figures) ?? 0) >= guaranteed, `${mode}: the budget holds one guaranteed request`);
          }
        });

        test('its detector recognises the node from the answers to GETs that load nothing', async () => {
          const node = simNode(simKind);
          const detector = serverKind(kind).detector;
          const loadedBefore = await loadedNow(nodeSpec(kind, node));
          node.clearRecording();
          const answers = new Map<string, JsonAnswer>();
          for (const path of detector.paths) answers.set(path, await requestBoundedJson(node.url + path, { dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES }));
          const found = detector.detect((path) => answers.get(path));
          const expected = kind === 'auto' ? DETECTED[simKind] : { kind, role: kind === 'llamacpp' ? DETECTED[simKind].role : 'unknown' };
          assert.deepEqual(found === undefined ? undefined : { kind: found.kind, role: found.role }, expected);
          assert.ok(node.requests().every((r) => r.method === 'GET' && detector.paths.includes(r.path)), JSON.stringify(node.requests()));
          assert.deepEqual(await loadedNow(nodeSpec(kind, node)), loadedBefore);
        });
      });
    }
  }
});
