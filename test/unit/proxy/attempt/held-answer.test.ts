import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeldBytesBudget } from '#src/proxy/attempt/held-answer.ts';

test('reservations share one limit; what does not fit is refused and not reserved', () => {
  const budget = new HeldBytesBudget(100);
  const a = budget.open();
  const b = budget.open();
  assert.equal(a.take(60), true);
  assert.equal(b.take(50), false);
  assert.equal(budget.held(), 60);
  assert.equal(b.take(40), true);
  assert.equal(budget.held(), 100);
  a.release();
  assert.equal(budget.held(), 40);
  a.release();
  assert.equal(budget.held(), 40, 'a second release returns nothing twice');
  assert.equal(a.take(1), false, 'a released reservation takes no more');
  b.release();
  assert.equal(budget.held(), 0);
});

test('a new limit applies at the next reservation (a reload applies to the next bytes)', () => {
  const budget = new HeldBytesBudget(10);
  const r = budget.open();
  assert.equal(r.take(20), false);
  budget.setLimit(30);
  assert.equal(r.take(20), true);
});
