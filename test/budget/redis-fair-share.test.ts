// The Redis guard decides fair shares inside its script, for every replica at once; the other guards decide them
// in TypeScript (fair-share.ts). The two must agree, slot for slot: random ledgers, written to a real Redis,
// decided by both.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import type { BudgetLimits } from '../../src/budget/budget-guard.js';
import { dayOf, type LedgerCall, minuteOf, prune } from '../../src/budget/budget-ledger.js';
import { type Claimant, decide, fairWindows } from '../../src/budget/fair-share.js';
import { RESERVE } from '../../src/budget/redis-budget-guard.js';
import { REDIS_URL, redisPrefix } from '../store/redis-helper.js';

const ACCOUNTS = ['203.0.113.7', '2001:db8:1:2::/64', 'key:agents', 'service'];

const cases = fc.record({
  perMinute: fc.integer({ min: 0, max: 9 }),
  perDay: fc.integer({ min: 0, max: 16 }),
  minIntervalMs: fc.constantFrom(0, 0, 150),
  reserve: fc.constantFrom(0, 0.25, 0.25, 0.5),
  maxWaitMs: fc.constantFrom(0, 300),
  calls: fc.array(fc.record({ ago: fc.integer({ min: -200, max: 5_000 }), who: fc.integer({ min: 0, max: 3 }) }), { maxLength: 20 }),
  claimants: fc.uniqueArray(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }),
});

const weightOf = (who: number) => (who === 2 ? 2 : 1);

test('property: the Redis script and fair-share.ts give the same slot to the same caller, or refuse alike', async (t) => {
  const prefix = redisPrefix(t);
  const client = new Redis(REDIS_URL);
  t.after(() => client.disconnect());
  let run = 0;
  await fc.assert(
    fc.asyncProperty(cases, async (c) => {
      run += 1;
      const limits: BudgetLimits = { ...c, minuteMs: 1_000, dayMs: 4_000 };
      const [seconds, micros] = await client.time();
      const t0 = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const calls: LedgerCall[] = c.calls
        .map(({ ago, who }) => ({ at: t0 - ago, account: ACCOUNTS[who] as string, weight: weightOf(who) }))
        .sort((a, b) => a.at - b.at);
      const keys = [`${prefix}${run}:calls`, `${prefix}${run}:backoff`, `${prefix}${run}:held`];
      for (const [i, call] of calls.entries())
        await client.zadd(keys[0] as string, call.at, `${call.at}:${i}|${call.weight}|${call.account}`);
      const claimants: Claimant[] = c.claimants.map((who) => ({ account: ACCOUNTS[who] as string, weight: weightOf(who) }));
      const kept = { minute: 0, day: 0 };
      for (const window of fairWindows(limits)) kept[window.name] = window.reserved;
      const args = [dayOf(limits), minuteOf(limits), c.perMinute, c.perDay, c.minIntervalMs, c.maxWaitMs, 'id', kept.minute, kept.day];
      for (const claimant of claimants) args.push(claimant.account, claimant.weight);
      const [ok, delayMs, now, which] = await RESERVE.run<[number, number, number, number]>(client, keys, args);

      const decision = decide({ calls: prune(calls, now, dayOf(limits)), backedOffUntil: 0 }, limits, now, c.maxWaitMs, claimants);
      const context = JSON.stringify({ c, now, reply: [ok, delayMs, which], decision });
      assert.equal(ok === 1, decision.ok, context);
      if (decision.ok) {
        assert.equal(now + delayMs, decision.at, context);
        assert.equal(which, decision.claimant, context);
      } else {
        assert.equal(now + delayMs, decision.retryAt, context);
        assert.equal(['budget', 'minute', 'day'][which], decision.hold, context);
      }
    }),
    { numRuns: 300 },
  );
});
