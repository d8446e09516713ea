// The model listing in Anthropic's shape (src/proxy/request/anthropic-models.ts): who gets it (a
// request with `anthropic-version`), the model object, the paging parameters (limit 1–1000,
// default 20; after_id or before_id, not both) and the pages they give, as tables.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '#src/core/errors.ts';
import {
  anthropicModel,
  anthropicPage,
  pageQuery,
  wantsAnthropicShape,
  type PageQuery,
} from '#src/proxy/request/anthropic-models.ts';
import type { FleetModel } from '#src/proxy/request/models-list.ts';

function entry(id: string, maxModelLen: number | null = null): FleetModel {
  return {
    id,
    object: 'model',
    created: 1_780_000_000,
    owned_by: 'switchyard',
    max_model_len: maxModelLen,
    loaded: maxModelLen !== null,
    nodes: [],
    on_demand_nodes: [],
  };
}

test('only a request that sends anthropic-version gets Anthropic’s shape', () => {
  assert.equal(wantsAnthropicShape({ 'anthropic-version': '2023-06-01' }), true);
  assert.equal(wantsAnthropicShape({ authorization: 'Bearer x' }), false);
  assert.equal(wantsAnthropicShape({}), false);
});

test('one model: type, id, display name, created_at in RFC 3339, its largest loaded context', () => {
  assert.deepEqual(anthropicModel(entry('qwen3:8b', 131_072)), {
    type: 'model',
    id: 'qwen3:8b',
    display_name: 'qwen3:8b',
    created_at: '2026-05-28T20:26:40.000Z',
    max_input_tokens: 131_072,
    max_tokens: null,
    capabilities: null,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
    line: null,
  });
  assert.equal(anthropicModel(entry('m')).max_input_tokens, null);
});

test('paging parameters: defaults, bounds, and one cursor at most', () => {
  const rows: readonly (readonly [string, PageQuery | string])[] = [
    ['', { limit: 20, afterId: undefined, beforeId: undefined }],
    ['limit=1', { limit: 1, afterId: undefined, beforeId: undefined }],
    ['limit=1000&after_id=b', { limit: 1000, afterId: 'b', beforeId: undefined }],
    ['before_id=b', { limit: 20, afterId: undefined, beforeId: 'b' }],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=2.5', 'limit'],
    ['limit=', 'limit'],
    ['limit=ten', 'limit'],
    ['after_id=a&before_id=c', 'after_id'],
  ];
  for (const [query, want] of rows) {
    const got = pageQuery(new URLSearchParams(query));
    if (typeof want === 'string') {
      assert.ok(got instanceof GatewayError, query);
      assert.equal(got.status, 400, query);
      assert.equal(got.param, want, query);
    } else assert.deepEqual(got, want, query);
  }
});

test('pages in id order: after an id, before an id, has_more in the direction paged, first and last ids', () => {
  const list = ['e', 'a', 'c', 'b', 'd'].map((id) => entry(id));
  const q = (limit: number, afterId?: string, beforeId?: string): PageQuery => ({ limit, afterId, beforeId });
  const rows: readonly (readonly [string, PageQuery, readonly string[], boolean])[] = [
    ['the first page', q(2), ['a', 'b'], true],
    ['everything', q(20), ['a', 'b', 'c', 'd', 'e'], false],
    ['exactly everything', q(5), ['a', 'b', 'c', 'd', 'e'], false],
    ['after b', q(2, 'b'), ['c', 'd'], true],
    ['after d: the last', q(2, 'd'), ['e'], false],
    ['after the last: empty', q(2, 'e'), [], false],
    ['after an id that has gone: where it would be', q(2, 'bb'), ['c', 'd'], true],
    ['before d', q(2, undefined, 'd'), ['b', 'c'], true],
    ['before c: the first two', q(2, undefined, 'c'), ['a', 'b'], false],
    ['before the first: empty', q(2, undefined, 'a'), [], false],
  ];
  for (const [what, query, ids, more] of rows) {
    const page = anthropicPage(list, query);
    assert.deepEqual(
      page.data.map((m) => m.id),
      ids,
      what,
    );
    assert.equal(page.has_more, more, what);
    assert.equal(page.first_id, ids[0] ?? null, what);
    assert.equal(page.last_id, ids.at(-1) ?? null, what);
  }
});
