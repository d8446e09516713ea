// Issue 38, item 8 (refined): item 8's fix refuses every forward whose acceptance window opened
// before the process started, since the run before could have accepted it — so after EVERY
// restart, clean or not, a site refused all forwards for max_clock_skew (30 s by default). What
// must hold: a clean stop saves the replay memory (every signature still acceptable, and the
// floor before which windows are refused wholesale) in the replay record beside the key file; a
// start after it refuses exactly those signatures and takes every other forward at once. A run
// that did not stop cleanly leaves its "running" record: the next start keeps the blackout, as
// it does for a bad record (with a warning naming the file and the problem) or one of another
// site or key. A site's first run (no record, no sign of an earlier one) has nothing to refuse.
// The decisions are pure (replay-record.ts, seen-forwards.ts), tabled here; over HTTP, a gateway
// in this process restarts cleanly, after a crash (its running record left), and over a
// corrupt record.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  claimFor,
  restartRule,
  SeenForwards,
  serializeRunning,
  serializeStopped,
  type RecordRead,
  type RestartContext,
} from '#src/mesh/forwarding/index.ts';
import { type GatewayUnderTest } from '#test/fixtures/in-process-fleet.ts';
import { eventually, type JsonResponse } from '#test/fixtures/http.ts';
import { JumpingClock } from '#test/fixtures/test-clocks.ts';
import { ForwardReceiver } from '#test/fixtures/forward-receiver.ts';

const S = 1_800_000_000_000;
const SKEW = 30_000;
const OWNER = { site: 'c', publicKey: 'c-key' };
const NONCE = 'n'.repeat(22);
const OTHER = 'o'.repeat(22);

test('which rule a start takes from the replay record, table', () => {
  const ctx: RestartContext = { ...OWNER, file: '/k/c.key.replay.json', nowMs: S, skewMs: SKEW, maxEntries: 4, ranBefore: false };
  const stopped = (over: { stoppedMs?: number; used?: [string, [string, number][]][]; owner?: typeof OWNER }): string =>
    serializeStopped(over.owner ?? OWNER, S - 60_000, over.stoppedMs ?? S - 1_000, SKEW, {
      refusedBeforeMs: S - 90_000,
      used: new Map((over.used ?? []).map(([site, list]) => [site, new Map(list)])),
    });
  const text = (t: string): RecordRead => ({ kind: 'text', text: t });
  const cases: { name: string; read: RecordRead; ranBefore?: boolean; rule: string; warn?: boolean; reason: RegExp }[] = [
    { name: 'no record, no earlier run', read: { kind: 'absent' }, rule: 'first', reason: /first run/ },
    {
      name: 'no record, but the mesh state file shows an earlier run',
      read: { kind: 'absent' },
      ranBefore: true,
      rule: 'blackout',
      warn: false,
      reason: /ran before/,
    },
    {
      name: 'unreadable',
      read: { kind: 'unreadable', problem: 'EACCES: permission denied' },
      rule: 'blackout',
      warn: true,
      reason: /^replay record \/k\/c\.key\.replay\.json: EACCES/,
    },
    {
      name: 'not JSON',
      read: text('{"v":1,'),
      rule: 'blackout',
      warn: true,
      reason: /^replay record \/k\/c\.key\.replay\.json: not JSON$/,
    },
    {
      name: 'a field of the wrong type',
      read: text(stopped({}).replace(/"stopped_at":\d+/, '"stopped_at":"yesterday"')),
      rule: 'blackout',
      warn: true,
      reason: /stopped_at/,
    },
    {
      name: 'a nonce no signature has',
      read: text(stopped({ used: [['a', [['short', S + 5_000]]]] })),
      rule: 'blackout',
      warn: true,
      reason: /used\.a\.0\.0/,
    },
    {
      name: 'more entries than max_remembered_forwards',
      read: text(stopped({ used: [['a', ['1', '2', '3', '4', '5'].map((d) => [d.repeat(16), S + 5_000] as [string, number])]] })),
      rule: 'blackout',
      warn: true,
      reason: /more than 4 remembered signatures/,
    },
    {
      name: "another site's",
      read: text(stopped({ owner: { site: 'b', publicKey: 'c-key' } })),
      rule: 'blackout',
      warn: true,
      reason: /site 'b''s, not this site's/,
    },
    {
      name: 'another key',
      read: text(stopped({ owner: { site: 'c', publicKey: 'old-key' } })),
      rule: 'blackout',
      warn: true,
      reason: /another site key/,
    },
    {
      name: 'the run before crashed (its running record left)',
      read: text(serializeRunning(OWNER, S - 60_000)),
      rule: 'blackout',
      warn: true,
      reason: /did not stop cleanly/,
    },
    {
      name: 'stopped ahead of this clock',
      read: text(stopped({ stoppedMs: S + 5_000 })),
      rule: 'blackout',
      warn: true,
      reason: /5 s ahead of this clock/,
    },
    {
      name: 'a clean stop',
      read: text(
        stopped({
          used: [
            [
              'a',
              [
                [NONCE, S + 5_000],
                [OTHER, S - 1],
              ],
            ],
          ],
        }),
      ),
      rule: 'carry',
      reason: /stopped cleanly .*its 1 signatures still acceptable/,
    },
  ];
  for (const c of cases) {
    const rule = restartRule(c.read, { ...ctx, ranBefore: c.ranBefore ?? false });
    assert.equal(rule.rule, c.rule, c.name);
    assert.match(rule.reason, c.reason, c.name);
    if (rule.rule === 'blackout') assert.equal(rule.warn, c.warn, c.name);
  }
  const carried = restartRule(
    text(
      stopped({
        used: [
          [
            'a',
            [
              [NONCE, S + 5_000],
              [OTHER, S - 1],
            ],
          ],
        ],
      }),
    ),
    ctx,
  );
  assert.ok(carried.rule === 'carry');
  assert.equal(carried.carried.refusedBeforeMs, S - 90_000, 'the floor the run before kept');
  assert.deepEqual([...(carried.carried.used.get('a') ?? [])], [[NONCE, S + 5_000]], 'a lapsed entry is not carried');
  // A start with a wider max_clock_skew: a window may close that much later than the run before reckoned.
  const wider = restartRule(
    text(
      stopped({
        used: [
          [
            'a',
            [
              [NONCE, S + 5_000],
              [OTHER, S - 1],
            ],
          ],
        ],
      }),
    ),
    { ...ctx, skewMs: SKEW + 10_000 },
  );
  assert.ok(wider.rule === 'carry');
  assert.deepEqual(
    [...(wider.carried.used.get('a') ?? [])],
    [
      [NONCE, S + 15_000],
      [OTHER, S + 9_999],
    ],
    'each entry kept 10 s longer',
  );
});

test('a memory carried in refuses its signatures and the windows before its floor, takes the rest; sealed, it takes nothing and hands on what it used or held', () => {
  const claim = (nonce: string, createdMs: number) => claimFor('a', nonce, createdMs, createdMs + SKEW, SKEW);
  const starting = new SeenForwards(S, { starting: true });
  const early = starting.hold(claim(NONCE, S), S);
  assert.equal(early.ok ? 'ok' : early.rejection, 'replay_unavailable', 'not restored yet');
  starting.open(S, {
    refusedBeforeMs: S - 90_000,
    used: new Map([
      [
        'a',
        new Map([
          [NONCE, S + 10_000],
          ['l'.repeat(22), S - 1],
        ]),
      ],
    ]),
  });
  const used = starting.hold(claim(NONCE, S - 20_000), S);
  assert.equal(used.ok ? 'ok' : used.rejection, 'replayed', 'used by the run before');
  assert.equal(
    starting.claim(claim(OTHER, S - 20_000), S).ok,
    true,
    'its window opened before this start, but the run before did not use it',
  );
  const floor = starting.hold(claim('f'.repeat(22), S - 95_000 + SKEW), S);
  assert.equal(floor.ok ? 'ok' : floor.rejection, 'replayed', 'its window opened before the floor');
  if (!floor.ok)
    assert.match(floor.detail, /before 2027-01-15T07:58:30\.000Z, where this site's memory of used signatures begins/);
  assert.equal(starting.hold(claim('h'.repeat(22), S), S).ok, true, 'held by a request in flight');
  const sealed = starting.seal(S + 1_000);
  assert.deepEqual(sealed?.refusedBeforeMs, S - 90_000);
  assert.deepEqual(
    new Set(sealed?.used.get('a')?.keys()),
    new Set([NONCE, OTHER, 'h'.repeat(22)]),
    'used and held, the lapsed one gone',
  );
  const late = starting.hold(claim('z'.repeat(22), S + 1_000), S + 1_000);
  assert.equal(late.ok ? 'ok' : late.rejection, 'replay_unavailable', 'stopping: nothing taken after the record');
  assert.equal(
    starting.claim(claim('h'.repeat(22), S), S + 1_000).ok,
    true,
    'the request holding one may still use it: it is in the record',
  );
  // Opened without a record, the blackout: every window that opened before this start.
  const blackout = new SeenForwards(S, { starting: true });
  blackout.open(S);
  const fresh = blackout.hold(claim(NONCE, S), S);
  assert.equal(fresh.ok ? 'ok' : fresh.rejection, 'replayed');
  assert.equal(new SeenForwards(S).seal(S) === undefined, false, 'a memory open from the start seals to a record');
  assert.equal(new SeenForwards(S, { starting: true }).seal(S), undefined, 'one never opened accepted nothing: no record');
});

// Over HTTP: site c (in this process) restarts; site a is a key whose clock runs 29 s ahead.
// c allows 10 minutes of skew, and a signs for that long: a signature used before a restart is
// still acceptable after it however long the restart takes on a loaded machine — so it is refused
// for being used (`replayed`), never for having lapsed. (With `[server] workers` the workers judge
// a signature's age on the system clock, which the test cannot move: only a window wider than any
// restart keeps the outcome independent of wall time.)
const HTTP_SKEW = 600_000;
const receiver = new ForwardReceiver({ mesh: [`max_clock_skew = "${HTTP_SKEW / 1000}s"`] });
const clock = new JumpingClock();
let dir: string;
let gw: GatewayUnderTest | undefined;

const record = (): string => join(dir, 'c.key.replay.json');

/** Site c's gateway, keeping its replay record in this test's directory. */
const startC = (workers = 1): Promise<GatewayUnderTest> => receiver.start({ workers, options: { clock }, replayFile: record() });
const signedAt = (nowMs: number): Promise<Record<string, string>> => receiver.signed('a', nowMs, HTTP_SKEW);
const send = (headers: Record<string, string>): Promise<JsonResponse> => receiver.send(headers);
const code = (res: JsonResponse): string => (res.status === 200 ? 'served' : res.json<{ error: { code: string } }>().error.code);
const said = (g: GatewayUnderTest, level: number, pattern: RegExp): boolean =>
  g.logs().some((line) => line.level === level && pattern.test(String(line.msg)) && line.file === record());

before(async () => {
  await receiver.listen();
  dir = await mkdtemp(join(tmpdir(), 'switchyard-replay-'));
});
after(async () => {
  await gw?.close();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

test('a clean restart keeps the replay memory: a forward used before it is refused, a fresh one is served at once', async () => {
  gw = await startC();
  // A first run (no record, no earlier run) takes forwards at once.
  assert.equal(code(await send(await signedAt(clock.now()))), 'served', 'a first run has no blackout');
  assert.ok(said(gw, 30, /first run/));
  const ahead = await signedAt(clock.now() + 29_000);
  assert.equal(code(await send(ahead)), 'served');
  await gw.close();
  gw = undefined;
  assert.equal((await stat(record())).mode & 0o777, 0o600, 'the record is readable by the gateway user only');
  gw = await startC();
  assert.ok(said(gw, 30, /stopped cleanly/));
  const replayed = await send(ahead);
  assert.equal(replayed.status, 401, replayed.text);
  assert.match(
    replayed.json<{ error: { message: string } }>().error.message,
    /^signature replayed: signature nonce '\S+' from 'a' was already used$/,
  );
  // Before: refused `replayed` (its window opened before this start) for max_clock_skew after every start.
  const fresh = await send(await signedAt(clock.now()));
  assert.equal(code(fresh), 'served', fresh.text);
});

test('with [server] workers = 2 the owner thread, which holds the memory, saves and restores it', async () => {
  assert.ok(gw !== undefined);
  await gw.close();
  gw = await startC(2);
  const used = await signedAt(clock.now());
  assert.equal(code(await send(used)), 'served', 'a clean stop before: taken at once');
  await gw.close();
  gw = await startC(2);
  assert.ok(said(gw, 30, /stopped cleanly/));
  assert.equal(code(await send(used)), 'replayed', 'used before the restart, sent to either worker');
  assert.equal(code(await send(await signedAt(clock.now()))), 'served', 'a fresh one');
});

test('after a crash (its running record left) and over a corrupt record, a start keeps the blackout', async () => {
  assert.ok(gw !== undefined);
  // While c runs, its record says so; a crash would leave exactly that.
  const running = await readFile(record(), 'utf8');
  assert.match(running, /"state":"running"/);
  const used = await signedAt(clock.now());
  assert.equal(code(await send(used)), 'served');
  await gw.close();
  gw = undefined;
  await writeFile(record(), running);
  gw = await startC();
  assert.ok(said(gw, 40, /did not stop cleanly/), 'a warning names the file and the crash');
  assert.equal(code(await send(used)), 'replayed', 'used by the run that crashed');
  assert.equal(code(await send(await signedAt(clock.now()))), 'replayed', 'the blackout: its window opened before this start');
  clock.jump(HTTP_SKEW + 1_000);
  await eventually(
    async () => code(await send(await signedAt(clock.now()))) === 'served',
    30_000,
    'c takes fresh forwards skew after start',
  );
  await gw.close();
  gw = undefined;
  await writeFile(record(), '{"v":1,"state":"stopped","site":"c"');
  gw = await startC();
  assert.ok(
    said(
      gw,
      40,
      /^replay record \S+c\.key\.replay\.json: not JSON: forwards an earlier run could have accepted are refused until /,
    ),
    'a warning names the file and the problem',
  );
  assert.equal(code(await send(await signedAt(clock.now()))), 'replayed', 'a corrupt record: the blackout');
});
