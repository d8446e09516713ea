// The simulated fleet the server-kind contract runs against (one node of each simulated kind), what
// each node does, and the readers the contract tests share: listing, capacity, what is loaded, a chat.

import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { Agent } from 'undici';
import { FIRST_ROUND, fetchCapacity, type NodeCapacity } from '#src/capacity/index.ts';
import type { NodeKind, NodeSpec } from '#src/config/index.ts';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { fetchModelList, type DiscoveredModel } from '#src/discovery/index.ts';
import type { ServerRole } from '#src/kinds/index.ts';
import { parseFleetConfig, startFleet, type Fleet, type SimKind, type SimNode } from '#src/sim/index.ts';
import { spec } from '#test/fixtures/builders.ts';

export const CONTEXT = 64;
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

[[node]]
name = "openai"
kind = "openai"
context = ${CONTEXT}

[[node.model]]
id = "model-o"
aliases = ["model-o-alias"]
`;

/** Which simulated nodes each kind is run against. */
export const PAIRS: Readonly<Record<NodeKind, readonly SimKind[]>> = {
  vllm: ['vllm'],
  llamacpp: ['llamacpp', 'llamacpp-router'],
  ollama: ['ollama'],
  sglang: ['sglang'],
  // Any OpenAI-compatible server: only the standard surface is used.
  openai: ['vllm', 'sglang', 'openai'],
  auto: ['vllm', 'llamacpp', 'llamacpp-router', 'ollama', 'sglang', 'openai'],
};

/**
 * Which refusals each simulated node sends (PROTOCOLS.md §6.1): Ollama truncates an overlong chat
 * prompt, and a single llama-server and SGLang answer any model name with their own model.
 */
export const REFUSES: Readonly<Record<SimKind, { readonly overlong: boolean; readonly unknownModel: boolean }>> = {
  vllm: { overlong: true, unknownModel: true },
  llamacpp: { overlong: true, unknownModel: false },
  'llamacpp-router': { overlong: true, unknownModel: true },
  ollama: { overlong: false, unknownModel: true },
  sglang: { overlong: true, unknownModel: false },
  openai: { overlong: true, unknownModel: true },
};

/** What `auto`'s detector (switchyard init) reads each simulated node as. */
export const DETECTED: Readonly<Record<SimKind, { readonly kind: NodeKind; readonly role: ServerRole }>> = {
  vllm: { kind: 'vllm', role: 'unknown' },
  llamacpp: { kind: 'llamacpp', role: 'single' },
  'llamacpp-router': { kind: 'llamacpp', role: 'router' },
  ollama: { kind: 'ollama', role: 'unknown' },
  sglang: { kind: 'sglang', role: 'unknown' },
  openai: { kind: 'openai', role: 'unknown' },
};

/** Which simulated nodes export load gauges on /metrics (Ollama has none), and which are llama-servers. */
export const EXPORTS_LOAD: Readonly<Record<SimKind, boolean>> = {
  vllm: true,
  llamacpp: true,
  'llamacpp-router': true,
  ollama: false,
  sglang: true,
  openai: false,
};
export const LLAMA_SERVER: Readonly<Record<SimKind, boolean>> = {
  vllm: false,
  llamacpp: true,
  'llamacpp-router': true,
  ollama: false,
  sglang: false,
  openai: false,
};

/** The models the fleet lists as not loaded (a router's `status`). */
export const UNLOADED = new Set(['r-idle']);

export const TIMEOUT_MS = 5000;
export const MAX_BYTES = 1024 * 1024;
export const OVERLONG_PROMPT = 'word '.repeat(CONTEXT * 4);

/** Starts the fleet before the calling file's tests and closes it after; the readers use it. */
export function useKindFleet() {
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
    (
      await fetchCapacity(node, models, {
        dispatcher,
        timeoutMs: TIMEOUT_MS,
        maxBytes: MAX_BYTES,
        requestsPerPoll: 8,
        round: FIRST_ROUND,
      })
    ).capacity;
  const loadedNow = async (node: NodeSpec): Promise<string[]> => {
    const models = await listing(node);
    const capacity = await capacityOf(node, models);
    return [...(capacity.loadedIds ?? models.filter((m) => m.loaded).map((m) => m.id))].sort();
  };
  const chat = (node: SimNode, model: string, content: string) =>
    requestBoundedJson(`${node.url}/v1/chat/completions`, {
      dispatcher,
      method: 'POST',
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_BYTES,
      body: JSON.stringify({ model, messages: [{ role: 'user', content }], max_tokens: 1 }),
    });
  return { dispatcher, simNode, nodeSpec, listing, capacityOf, loadedNow, chat };
}
