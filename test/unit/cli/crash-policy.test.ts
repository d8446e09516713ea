import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { EXIT_INTERNAL_ERROR, installCrashPolicy } from '#src/cli/crash-policy.ts';
import { HangupRelay } from '#src/cli/hangups.ts';

function harness() {
  const target = new EventEmitter();
  const lines: Record<string, unknown>[] = [];
  const calls: string[] = [];
  const policy = installCrashPolicy(target, {
    report: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    shutDown: () => calls.push('shutDown'),
    exitNow: (code) => calls.push(`exit ${code}`),
  });
  return { target, lines, calls, policy };
}

test('an unhandled rejection is logged loudly and the process keeps serving', () => {
  const { target, lines, calls, policy } = harness();
  target.emit('unhandledRejection', new Error('lost promise'));
  assert.deepEqual(calls, []);
  assert.equal(policy.crashed(), false);
  assert.equal(lines[0]?.level, 'error');
  assert.match(String(lines[0]?.msg), /unhandled promise rejection/);
  assert.equal((lines[0]?.err as { message: string }).message, 'lost promise');
});

test('an uncaught exception drains and exits 70; a second one exits at once', () => {
  const { target, lines, calls, policy } = harness();
  target.emit('uncaughtException', new TypeError('half-done'));
  assert.deepEqual(calls, ['shutDown']);
  assert.equal(policy.crashed(), true);
  assert.equal(lines[0]?.level, 'fatal');
  target.emit('uncaughtException', 'again');
  assert.deepEqual(calls, ['shutDown', `exit ${EXIT_INTERNAL_ERROR}`]);
});

test('uninstalling removes both listeners', () => {
  const { target, policy } = harness();
  policy.uninstall();
  assert.equal(target.listenerCount('unhandledRejection'), 0);
  assert.equal(target.listenerCount('uncaughtException'), 0);
});

test('SIGHUPs before anyone listens are delivered once at subscription; later ones each time', () => {
  const early = new HangupRelay(3);
  const seen: string[] = [];
  early.notify();
  const stop = early.subscribe(() => seen.push('hup'));
  assert.deepEqual(seen, ['hup']);
  early.notify();
  assert.deepEqual(seen, ['hup', 'hup']);
  stop();
  early.notify();
  assert.deepEqual(seen, ['hup', 'hup']);
  const quiet = new HangupRelay(0);
  quiet.subscribe(() => seen.push('never'));
  assert.equal(seen.includes('never'), false);
});
