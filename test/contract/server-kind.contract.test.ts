// Contract: every server kind, asked the way its module says, reads a simulated node of that kind
// (and `auto` every node, `openai` any OpenAI-compatible one) with the same properties: the probe
// passes asking only the kind's health paths, the listing holds the node's models, capacity figures
// agree with the node's own and asking never loads a model, a tokenizer request counts like the
// node does, a refusal the node sends is read for what it means, and its detector (switchyard init)
// recognises the node without loading anything, and it resolves a request's model name as the node
// does (each name it takes reaches a listed id the node answers for; a name it refuses, a node that
// refuses unknown names refuses too). The fleet and the readers: ./kind-fleet.ts; what the gateway
// asks of a kind instead of its name (listing entries, load GETs, KV pool): server-kind-asked.contract.test.ts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeKind } from '#src/config/index.ts';
import { requestBoundedJson, type JsonAnswer } from '#src/core/bounded-json.ts';
import { serverKind, tokenizerFor } from '#src/kinds/index.ts';
import { probeNode } from '#src/nodes/index.ts';
import { countTokens, type SimKind } from '#src/sim/index.ts';
import { CONTEXT, DETECTED, MAX_BYTES, OVERLONG_PROMPT, PAIRS, REFUSES, TIMEOUT_MS, useKindFleet } from './kind-fleet.ts';

describe('every server kind against a simulated node of that kind', () => {
  const { dispatcher, simNode, nodeSpec, listing, capacityOf, loadedNow, chat } = useKindFleet();
  for (const [kind, simKinds] of Object.entries(PAIRS) as [NodeKind, readonly SimKind[]][]) {
    for (const simKind of simKinds) {
      describe(`${kind} on a ${simKind} node`, () => {
        test("the probe passes, asking only the kind's health paths", async () => {
          const node = simNode(simKind);
          node.clearRecording();
          const outcome = await probeNode(nodeSpec(kind, node), {
            dispatcher,
            timeoutMs: TIMEOUT_MS,
            monotonicMs: () => performance.now(),
          });
          assert.equal(outcome.ok, true, JSON.stringify(outcome));
          const asked = node.requests().map((r) => r.path);
          assert.ok(asked.length > 0 && asked.every((path) => serverKind(kind).healthPaths.includes(path)), asked.join(' '));
        });

        test("the listing holds exactly the node's models", async () => {
          const node = simNode(simKind);
          const models = await listing(nodeSpec(kind, node));
          assert.deepEqual(models.map((m) => m.id).sort(), [...node.modelIds()].sort());
        });

        test("capacity figures agree with the node's, and asking loads nothing", async () => {
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
          for (const id of Object.keys(capacity.models))
            assert.ok(loadedBefore.includes(id), `${id} has figures but is not loaded`);
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
            dispatcher,
            method: 'POST',
            body: JSON.stringify(request.body),
            timeoutMs: TIMEOUT_MS,
            maxBytes: MAX_BYTES,
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
          assert.equal(
            notFound?.kind,
            REFUSES[simKind].unknownModel ? 'model_not_found' : undefined,
            JSON.stringify(unknown.body),
          );
        });

        test('it resolves model names as the node does, to an id the node listed', async () => {
          const node = simNode(simKind);
          const target = nodeSpec(kind, node);
          const models = await listing(target);
          const byId = new Map(models.map((m) => [m.id, m]));
          const loaded = new Set(await loadedNow(target));
          // Every id and alias, Ollama's short form of a `:latest` id, and names no node lists.
          const names = [
            ...models.flatMap((m) => [
              m.id,
              ...m.aliases,
              ...(m.id.endsWith(':latest') ? [m.id.slice(0, -':latest'.length)] : []),
            ]),
            'no-such-model',
            'no-such-model:latest',
          ];
          for (const name of names) {
            const resolved = serverKind(kind).resolveModelName(name, byId);
            if (resolved !== undefined) assert.ok(byId.has(resolved), `${name} → ${resolved}, which the node does not list`);
            // Only names of loaded models are asked (asking for another would load it).
            if (resolved !== undefined && !loaded.has(resolved)) continue;
            if (resolved === undefined && !REFUSES[simKind].unknownModel) continue;
            const answer = await chat(node, name, 'hi');
            assert.ok(answer.ok, JSON.stringify(answer));
            assert.equal(
              answer.status === 200,
              resolved !== undefined,
              `${kind} resolves ${name} to ${String(resolved)}; the node answered ${answer.status}`,
            );
            if (resolved === undefined) continue;
            const sent = await chat(node, resolved, 'hi');
            assert.ok(sent.ok && sent.status === 200, `the listed id ${resolved} is answered: ${JSON.stringify(sent)}`);
          }
          assert.equal(serverKind(kind).resolveModelName('no-such-model', byId), undefined);
        });

        test('its detector recognises the node from the answers to GETs that load nothing', async () => {
          const node = simNode(simKind);
          const detector = serverKind(kind).detector;
          const loadedBefore = await loadedNow(nodeSpec(kind, node));
          node.clearRecording();
          const answers = new Map<string, JsonAnswer>();
          for (const path of detector.paths)
            answers.set(
              path,
              await requestBoundedJson(node.url + path, { dispatcher, timeoutMs: TIMEOUT_MS, maxBytes: MAX_BYTES }),
            );
          const found = detector.detect((path) => answers.get(path));
          const expected =
            kind === 'auto' ? DETECTED[simKind] : { kind, role: kind === 'llamacpp' ? DETECTED[simKind].role : 'unknown' };
          assert.deepEqual(found === undefined ? undefined : { kind: found.kind, role: found.role }, expected);
          assert.ok(
            node.requests().every((r) => r.method === 'GET' && detector.paths.includes(r.path)),
            JSON.stringify(node.requests()),
          );
          assert.deepEqual(await loadedNow(nodeSpec(kind, node)), loadedBefore);
        });
      });
    }
  }
});
