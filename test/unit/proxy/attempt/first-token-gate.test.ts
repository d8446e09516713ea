// The gate holds what passes before the first token and opens on it, on the stream's end, or past its byte bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { FirstTokenGate } from '#src/proxy/attempt/first-token-gate.ts';

test('held until a token came, then everything held, in order, once; the opener told once', () => {
  let opened = 0;
  const gate = new FirstTokenGate({ gateOpened: () => (opened += 1) });
  assert.equal(gate.hold(Buffer.from('data: {"delta":{"role":"assistant"}}\n\n'), 0), false);
  assert.equal(gate.hold(Buffer.from(':\n\n'), 0), false);
  assert.equal(gate.hold(Buffer.alloc(0), 0), false);
  assert.equal(gate.hold(Buffer.from('data: {"delta":{"content":"Hi"}}\n\n'), 1), true);
  assert.equal(opened, 0);
  assert.equal(gate.open().toString(), 'data: {"delta":{"role":"assistant"}}\n\n:\n\ndata: {"delta":{"content":"Hi"}}\n\n');
  assert.equal(opened, 1);
});

test('past its byte bound the gate opens without a token', () => {
  const gate = new FirstTokenGate({ gateOpened: () => {} }, 10);
  assert.equal(gate.hold(Buffer.from('0123456789'), 0), false);
  assert.equal(gate.hold(Buffer.from('a'), 0), true);
  assert.equal(gate.open().toString(), '0123456789a');
});

test('opened with nothing held: nothing to write', () => {
  const gate = new FirstTokenGate({ gateOpened: () => {} });
  assert.equal(gate.open().length, 0);
});
