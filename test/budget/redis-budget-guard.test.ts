import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import type { BudgetLimits } from '../../src/budget/budget-guard.js';
import { RedisBudgetGuard } from '../../src/budget/redis-budget-guard.js';
import { addressCaller, runAs } from '../../src/core/caller.js';
import { BudgetExhaustedError, CallerShareSpentError } from '../../src/core/errors.js';
import { redisPrefix, sharedStore } from '../store/redis-helper.js';
import { startProxy } from '../store/tcp-proxy.js';

/** maxWaitMs short, so that tests with scaled windows see refusals rather than long pacing waits. */
async function replica(t: TestContext, prefix: string, limits: BudgetLimits, url?: string, maxWaitMs = 100, beatMs?: number) {
  const shared = await sharedStore(t, prefix, url, beatMs);
  return { ...shared, guard: new RedisBudgetGuard('alphaVantage', limits, shared, maxWaitMs) };
}

async function trySpend(guard: RedisBudgetGuard): Promise<boolean> {
  try {
    await guard.acquire();
    return true;
  } catch (error) {
    assert.ok(error instanceof BudgetExhaustedError, String(error));
    return false;
  }
}

test('five replicas hammering together send exactly the per-minute budget', async (t) => {
  const prefix = redisPrefix(t);
  const limits = { perMinute: 5, perDay: 500, minIntervalMs: 0 };
  const replicas = await Promise.all(Array.from({ length: 5 }, () => replica(t, prefix, limits)));
  const outcomes = await Promise.all(replicas.flatMap(({ guard }) => Array.from({ length: 20 }, () => trySpend(guard))));
  assert.equal(outcomes.filter(Boolean).length, 5);
  const snapshot = await replicas[0]!.guard.snapshot();
  assert.equal(snapshot.usedMinute, 5);
  assert.equal(snapshot.leftMinute, 0);
  assert.equal(snapshot.store, 'redis');
  const refusal = await replicas[1]!.guard.acquire().catch((e: BudgetExhaustedError) => e);
  assert.ok(refusal instanceof BudgetExhaustedError && refusal.retryAfterSeconds! >= 59);
});

test('spacing, the day cap and back-off are enforced by the shared script', async (t) => {
  const prefix = redisPrefix(t);
  const limits = { perMinute: 0, perDay: 3, minIntervalMs: 30, minuteMs: 200, dayMs: 400 };
  const [a, b] = await Promise.all([replica(t, prefix, limits), replica(t, prefix, limits)]);
  const started = Date.now();
  const sent = await Promise.all([trySpend(a!.guard), trySpend(b!.guard), trySpend(a!.guard), trySpend(b!.guard)]);
  assert.equal(sent.filter(Boolean).length, 3, 'day cap of 3');
  assert.ok(Date.now() - started >= 60, 'three calls 30 ms apart');
  await new Promise((resolve) => setTimeout(resolve, 450));
  assert.equal(await trySpend(a!.guard), true, 'the scaled day has rolled');
  await b!.guard.backOff(5_000);
  const refusal = await a!.guard.acquire().catch((e: BudgetExhaustedError) => e);
  assert.ok(refusal instanceof BudgetExhaustedError);
  assert.ok(refusal.retryAfterSeconds! >= 4, 'a back-off by one replica holds for all');
});

test('with Redis lost the guard spends only its share, then writes its calls back when Redis returns', async (t) => {
  const prefix = redisPrefix(t);
  const proxy = await startProxy(t);
  const limits = { perMinute: 6, perDay: 100, minIntervalMs: 0, minuteMs: 400 };
  const a = await replica(t, prefix, limits, proxy.url);
  const b = await replica(t, prefix, limits);
  await a.heartbeat.beat();
  assert.equal(a.heartbeat.replicas, 2);
  assert.equal(await trySpend(a.guard), true);
  assert.equal(await trySpend(b.guard), true);
  await a.guard.snapshot();

  await proxy.cut();
  if (a.redis.ready) await once(a.redis, 'state:down');
  // Right after the loss the guard assumes the others spent the whole minute, and says why it refuses.
  const held = await a.guard.acquire().catch((e: BudgetExhaustedError) => e);
  assert.ok(held instanceof BudgetExhaustedError);
  assert.match(held.message, /shared store \(Redis\) is unreachable.*conservative/);
  const snap = await a.guard.snapshot();
  assert.equal(snap.store, 'local-fallback');
  await new Promise((resolve) => setTimeout(resolve, 450));
  // A fresh minute: 6 per minute shared by 2 replicas is 3 for this one.
  const local = await Promise.all(Array.from({ length: 6 }, () => trySpend(a.guard)));
  assert.equal(local.filter(Boolean).length, 3);

  await proxy.open();
  await once(a.redis, 'state:ready');
  // Reconciling (merge then read) runs on `ready`; an acquire waits for it.
  await a.guard.acquire().catch(() => undefined);
  const shared = await b.guard.snapshot();
  assert.equal(shared.store, 'redis');
  assert.ok(shared.usedDay >= 2 + 3, `the fallback calls are in the shared ledger (usedDay ${shared.usedDay})`);
  assert.equal((await a.guard.snapshot()).store, 'redis');
});

test('a call that wakes late for its slot gives it up and queues again: calls reach the provider a full second apart', async (t) => {
  const prefix = redisPrefix(t);
  const proxy = await startProxy(t);
  // A 1/s plan paced at 1.2 s. No heartbeat during the test: the held reply is the reservation's.
  const limits = { perMinute: 0, perDay: 0, minIntervalMs: 1_200 };
  const a = await replica(t, prefix, limits, proxy.url, 5_000, 60_000);
  const b = await replica(t, prefix, limits, undefined, 5_000, 60_000);
  const sentAt: Record<string, number> = {};
  // A's slot is now, but its reply comes 400 ms late (a slow link, or a loop busy elsewhere).
  const held = proxy.holdNextReply(400);
  const first = a.guard.acquire().then(() => {
    sentAt.a = Date.now();
  });
  await held;
  // B reserves once A's slot is in the ledger: the next slot, 1.2 s after A's.
  await b.guard.acquire();
  sentAt.b = Date.now();
  await first;
  const gap = Math.abs((sentAt.a as number) - (sentAt.b as number));
  assert.ok(gap >= 1_000, `two calls ${gap} ms apart on a 1/s plan`);
  const ledger = await b.redis.client.zcard(b.redis.key('{budget:alphaVantage}:calls'));
  assert.equal(ledger, 2, 'the slot given up is no longer counted');
});

test('a replica that never reached Redis sends nothing until it can', async (t) => {
  const prefix = redisPrefix(t);
  const { guard } = await replica(t, prefix, { perMinute: 5, perDay: 500, minIntervalMs: 0 }, 'redis://127.0.0.1:1');
  const refusal = await guard.acquire().catch((e: BudgetExhaustedError) => e);
  assert.ok(refusal instanceof BudgetExhaustedError);
  assert.ok(refusal.retryAfterSeconds! <= 60);
  assert.match(refusal.message, /shared store \(Redis\) is unreachable.*conservative/);
  assert.equal((await guard.snapshot()).store, 'local-fallback');
});

test('fair shares across replicas: a flooder on one replica is held to its share, a newcomer on another gets the kept call', async (t) => {
  const prefix = redisPrefix(t);
  const limits = { perMinute: 4, perDay: 500, minIntervalMs: 0, reserve: 0.25 };
  const [a, b] = await Promise.all([replica(t, prefix, limits), replica(t, prefix, limits)]);
  const flooder = addressCaller('203.0.113.9');
  const newcomer = addressCaller('2001:db8:7:7::1');
  const outcomes = await runAs([flooder], () =>
    Promise.all(
      Array.from({ length: 6 }, () =>
        a!.guard.acquire().then(
          () => 'sent',
          (e: unknown) => e,
        ),
      ),
    ),
  );
  assert.equal(outcomes.filter((o) => o === 'sent').length, 3, 'three of four: one is kept for callers below their share');
  const refusal = outcomes.find((o) => o !== 'sent');
  assert.ok(refusal instanceof CallerShareSpentError, String(refusal));
  assert.deepEqual(refusal.accounts, ['203.0.113.9']);
  assert.ok(refusal.retryAfterSeconds! >= 59);
  await runAs([newcomer], () => b!.guard.acquire());
  const after = await runAs([flooder], () => b!.guard.acquire().catch((e: unknown) => e));
  assert.ok(after instanceof BudgetExhaustedError, 'the minute is spent for everyone now');
  const snapshot = await b!.guard.snapshot();
  assert.equal(snapshot.usedMinute, 4);
  assert.deepEqual(snapshot.share?.minute, { limit: 4, reserved: 1, callers: 2, held: 1 });
  assert.equal(snapshot.share?.day?.callers, 2);
});
