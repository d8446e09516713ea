import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServerResponse, IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { ActiveRequests, mergeTables, TableBuilder, type Handler } from '#src/proxy/index.ts';

const noop: Handler = () => {};
const other: Handler = () => {};

test('a table maps path, then method, to its handler', () => {
  const builder = new TableBuilder();
  builder.add('GET', '/a', noop);
  builder.add('POST', '/a', other);
  const table = builder.table();
  assert.deepEqual([...(table.get('/a')?.keys() ?? [])], ['GET', 'POST']);
  assert.equal(table.get('/a')?.get('POST'), other);
});

test("merged tables: a later table replaces an earlier one's path with all its methods", () => {
  const first = new TableBuilder();
  first.add('GET', '/health', noop);
  first.add('POST', '/health', noop);
  first.add('GET', '/v1/models', noop);
  const second = new TableBuilder();
  second.add('GET', '/health', other);
  const merged = mergeTables(first.table(), second.table());
  assert.deepEqual([...(merged.get('/health')?.entries() ?? [])], [['GET', other]]);
  assert.equal(merged.get('/v1/models')?.get('GET'), noop);
});

test('active requests count each response until it closes', () => {
  const active = new ActiveRequests();
  const a = new ServerResponse(new IncomingMessage(new Socket()));
  const b = new ServerResponse(new IncomingMessage(new Socket()));
  active.track(a);
  active.track(b);
  assert.equal(active.count(), 2);
  a.emit('close');
  assert.equal(active.count(), 1);
  b.emit('close');
  assert.equal(active.count(), 0);
});
