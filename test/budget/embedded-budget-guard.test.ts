import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EmbeddedBudgetGuard } from '../../src/budget/embedded-budget-guard.js';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { addressCaller, runAs } from '../../src/core/caller.js';
import { BudgetExhaustedError, CallerShareSpentError } from '../../src/core/errors.js';
import { openStateDatabase } from '../../src/store/state-database.js';
import { tempDir } from '../helpers/config.js';

const LIMITS = { perMinute: 3, perDay: 5, minIntervalMs: 0 };

function open(t: import('node:test').TestContext, dir: string) {
  const db = openStateDatabase(dir);
  t.after(() => db.close());
  return db;
}

async function spend(guard: EmbeddedBudgetGuard, n: number): Promise<number> {
  let sent = 0;
  for (let i = 0; i < n; i += 1) {
    try {
      await guard.acquire();
      sent += 1;
    } catch (error) {
      assert.ok(error instanceof BudgetExhaustedError);
    }
  }
  return sent;
}

test('the per-minute cap refuses with the moment the budget returns', async (t) => {
  const guard = new EmbeddedBudgetGuard('p', LIMITS, open(t, tempDir(t)));
  assert.equal(await spend(guard, 3), 3);
  const error = await guard.acquire().then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof BudgetExhaustedError);
  assert.equal(error.code, 'QUOTA_EXHAUSTED');
  assert.ok(error.retryAfterSeconds !== undefined && error.retryAfterSeconds >= 59 && error.retryAfterSeconds <= 62);
  const snapshot = await guard.snapshot();
  assert.equal(snapshot.usedMinute, 3);
  assert.equal(snapshot.leftMinute, 0);
  assert.equal(snapshot.leftDay, 2);
  assert.equal(snapshot.store, 'embedded');
});

test('the day count and a back-off survive closing and reopening the store', async (t) => {
  const dir = tempDir(t);
  const limits = { ...LIMITS, minuteMs: 50 };
  const db = openStateDatabase(dir);
  const first = new EmbeddedBudgetGuard('p', limits, db);
  assert.equal(await spend(first, 3), 3);
  db.close();

  const second = new EmbeddedBudgetGuard('p', limits, open(t, dir));
  assert.equal((await second.snapshot()).usedDay, 3);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(await spend(second, 5), 2, 'only what is left of the day');
  await second.backOff(60_000);

  const third = new EmbeddedBudgetGuard('other-name-unaffected', limits, open(t, dir));
  assert.equal(await spend(third, 1), 1);
  const fourth = new EmbeddedBudgetGuard('p', { ...limits, perDay: 0 }, open(t, dir));
  await assert.rejects(fourth.acquire(), BudgetExhaustedError, 'the back-off was persisted');
  assert.ok((await fourth.snapshot()).backedOffUntil !== null);
});

test('two guards on one state directory (two processes) share one budget', async (t) => {
  const dir = tempDir(t);
  const a = new EmbeddedBudgetGuard('p', LIMITS, open(t, dir));
  const b = new EmbeddedBudgetGuard('p', LIMITS, open(t, dir));
  const sent = (await Promise.all([spend(a, 3), spend(b, 3)])).reduce((x, y) => x + y, 0);
  assert.equal(sent, 3);
});

test('spacing makes callers wait for their slot, up to the pacing bound, then refuses', async (t) => {
  const started = Date.now();
  // A frozen clock: all five ask at the same instant, however long each fsynced reservation takes.
  const guard = new EmbeddedBudgetGuard('p', { perMinute: 0, perDay: 0, minIntervalMs: 40 }, open(t, tempDir(t)), 100, () => started);
  const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => guard.acquire()));
  const sent = outcomes.filter((o) => o.status === 'fulfilled').length;
  assert.equal(sent, 3, 'slots at 0, 40 and 80 ms fit a 100 ms wait');
  assert.ok(Date.now() - started >= 80);
});

test('fair shares: two processes on one STATE_DIR see one ledger of who spent; a flooder is held to its share, a newcomer is not', async (t) => {
  const dir = tempDir(t);
  const limits = { perMinute: 4, perDay: 500, minIntervalMs: 0, reserve: 0.25 };
  const first = new EmbeddedBudgetGuard('alphaVantage', limits, open(t, dir));
  const second = new EmbeddedBudgetGuard('alphaVantage', limits, open(t, dir));
  const flooder = addressCaller('203.0.113.9');
  const newcomer = addressCaller('198.51.100.4');
  const outcomes = await runAs([flooder], async () =>
    Promise.all(
      [1, 2, 3, 4].map(() =>
        first.acquire().then(
          () => 'sent',
          (e: unknown) => e,
        ),
      ),
    ),
  );
  assert.deepEqual(outcomes.slice(0, 3), ['sent', 'sent', 'sent']);
  const refusal = outcomes[3];
  assert.ok(refusal instanceof CallerShareSpentError, String(refusal));
  assert.equal(refusal.code, 'CALLER_SHARE_SPENT');
  assert.match(refusal.message, /Alpha Vantage's 4 calls a minute/);
  assert.ok(refusal.retryAfterSeconds !== undefined && refusal.retryAfterSeconds >= 59);
  // The other process holds the same record of who spent: the newcomer takes the call kept for it.
  await runAs([newcomer], () => second.acquire());
  const spent = await runAs([newcomer], () => second.acquire().catch((e: unknown) => e));
  assert.ok(spent instanceof BudgetExhaustedError, 'then the minute is spent for everyone');
  const snapshot = await first.snapshot();
  assert.deepEqual(snapshot.share, {
    reserve: 0.25,
    minute: { limit: 4, reserved: 1, callers: 2, held: 1 },
    day: { limit: 500, reserved: 125, callers: 2, held: 1 },
  });
  assert.deepEqual([...first.tally.calls], [['anonymous', 3]]);
  assert.deepEqual([...first.tally.refusals], [['anonymous', 1]]);
});

test("a state.db written before fair shares opens, its calls counted against the budget and put to no one's account", async (t) => {
  const dir = tempDir(t);
  const old = new DatabaseSync(join(dir, 'state.db'));
  old.exec(
    'CREATE TABLE budget_calls (name TEXT NOT NULL, at INTEGER NOT NULL); CREATE TABLE budget_backoff (name TEXT PRIMARY KEY, until INTEGER NOT NULL)',
  );
  old.prepare('INSERT INTO budget_calls (name, at) VALUES (?, ?)').run('p', Date.now() - 1_000);
  old.close();
  const guard = new EmbeddedBudgetGuard('p', { perMinute: 3, perDay: 5, minIntervalMs: 0, reserve: 0.25 }, open(t, dir));
  const snapshot = await guard.snapshot();
  assert.equal(snapshot.usedMinute, 1);
  assert.equal(snapshot.share?.day?.callers, 1);
  assert.equal(await runAs([addressCaller('203.0.113.9')], () => spend(guard, 3)), 2);
});
