// Contract: what the gateway asks of a server kind instead of switching on its name, for every kind
// against a simulated node of that kind (the pairs of ./kind-fleet.ts): each listing entry is read
// as the node lists it (loaded or not, its context, its aliases), the GETs of its load answer its
// load gauges without loading a model (a router is asked per loaded model), and its KV pool is the
// one the node runs (a llama-server's slots share one; the others manage their cache themselves).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeKind } from '#src/config/index.ts';
import { requestBoundedJson } from '#src/core/bounded-json.ts';
import { requestBoundedText } from '#src/core/bounded-text.ts';
import { isRecord } from '#src/core/is-record.ts';
import { isRunningEntry, readLoadFigures, serverKind } from '#src/kinds/index.ts';
import type { SimKind } from '#src/sim/index.ts';
import { CONTEXT, EXPORTS_LOAD, LLAMA_SERVER, MAX_BYTES, PAIRS, TIMEOUT_MS, UNLOADED, useKindFleet } from './kind-fleet.ts';

describe('what every server kind is asked instead of its name, against a simulated node', () => {
  const { dispatcher, simNode, nodeSpec, listing, capacityOf, loadedNow } = useKindFleet();
  for (const [kind, simKinds] of Object.entries(PAIRS) as [NodeKind, readonly SimKind[]][]) {
    for (const simKind of simKinds) {
      describe(`${kind} on a ${simKind} node`, () => {
        test('it reads each listing entry as the node lists it', async () => {
          const node = simNode(simKind);
          const raw = await requestBoundedJson(`${node.url}/v1/models`, {
            dispatcher,
            timeoutMs: TIMEOUT_MS,
            maxBytes: MAX_BYTES,
          });
          assert.ok(raw.ok && raw.status === 200, JSON.stringify(raw));
          const body = serverKind(kind).normalizeListing(raw.body);
          const data = isRecord(body) && Array.isArray(body.data) ? body.data : [];
          assert.equal(data.length, node.modelIds().length);
          for (const entry of data) {
            assert.ok(isRecord(entry) && typeof entry.id === 'string');
            const read = serverKind(kind).listingEntry(entry, entry.id);
            assert.equal(read.loaded, !UNLOADED.has(entry.id), `${entry.id}: ${JSON.stringify(read)}`);
            assert.equal(
              isRunningEntry(read),
              !UNLOADED.has(entry.id),
              `${entry.id} runs without a switch: ${JSON.stringify(read)}`,
            );
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

        test("its KV pool is the node's: budgeted on a llama-server, none where the server manages its cache", async () => {
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
      });
    }
  }
});
