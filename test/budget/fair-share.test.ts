import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { BudgetLimits } from '../../src/budget/budget-guard.js';
import { countSince, dayOf, type LedgerCall, minuteOf, nextSlot } from '../../src/budget/budget-ledger.js';
import { type Claimant, decide, reservedCalls, shareIn } from '../../src/budget/fair-share.js';

const MINUTE = 60_000;
const LIMITS: BudgetLimits = { perMinute: 5, perDay: 500, minIntervalMs: 0, reserve: 0.25 };
const A: Claimant = { account: '203.0.113.7', weight: 1 };
const B: Claimant = { account: '198.51.100.2', weight: 1 };

/** Spends as `claimant` until refused, at `now`; returns the calls it got and the refusal. */
function spendAll(calls: LedgerCall[], limits: BudgetLimits, now: number, claimant: Claimant) {
  for (let n = 0; ; n += 1) {
    const decision = decide({ calls, backedOffUntil: 0 }, limits, now, 0, [claimant]);
    if (!decision.ok) return { got: n, decision };
    calls.push({ at: decision.at, ...claimant });
  }
}

test('the calls kept back: a quarter of each window, rounded down (5 a minute keeps 1, 500 a day 125, 3 a minute none)', () => {
  assert.equal(reservedCalls(5, 0.25), 1);
  assert.equal(reservedCalls(4, 0.25), 1);
  assert.equal(reservedCalls(3, 0.25), 0);
  assert.equal(reservedCalls(500, 0.25), 125);
  assert.equal(reservedCalls(60, 0.25), 15);
  assert.equal(reservedCalls(5, 0), 0);
  assert.equal(reservedCalls(0, 0.25), 0);
});

test('one caller alone spends all but the kept calls of a minute (4 of 5): work-conserving, at least three quarters', () => {
  const calls: LedgerCall[] = [];
  const { got, decision } = spendAll(calls, LIMITS, 1_000_000, A);
  assert.equal(got, 4);
  assert.ok(!decision.ok && decision.hold === 'minute');
  // Its share returns as its oldest call leaves the window (counted with the margin).
  assert.ok(!decision.ok && decision.retryAt === 1_000_000 + minuteOf(LIMITS));
});

test('one caller alone spends three quarters of a day, never the last quarter', () => {
  const limits: BudgetLimits = { perMinute: 0, perDay: 100, minIntervalMs: 0, reserve: 0.25 };
  const calls: LedgerCall[] = [];
  const { got, decision } = spendAll(calls, limits, 5_000_000, A);
  assert.equal(got, 75);
  assert.ok(!decision.ok && decision.hold === 'day');
  assert.equal(!decision.ok && decision.retryAt, 5_000_000 + dayOf(limits));
});

test('a newcomer takes a kept call while the first caller floods, and the flooder never does', () => {
  const calls: LedgerCall[] = [];
  const now = 2_000_000;
  spendAll(calls, LIMITS, now, A);
  const newcomer = decide({ calls, backedOffUntil: 0 }, LIMITS, now, 0, [B]);
  assert.ok(newcomer.ok, 'the newcomer has spent nothing: below its share');
  calls.push({ at: now, ...B });
  // The window is spent for everyone now: the budget itself refuses.
  const again = decide({ calls, backedOffUntil: 0 }, LIMITS, now, 0, [A]);
  assert.ok(!again.ok && again.hold === 'budget');
});

test("under contention no caller spends more than its share: once the flooder's calls leave the window, both callers asking in turn end at about half", () => {
  const limits: BudgetLimits = { perMinute: 10, perDay: 0, minIntervalMs: 0, reserve: 0.2 };
  const calls: LedgerCall[] = [];
  const now = 5_000_000;
  // The flooder alone: 8 of 10 (2 kept). The other caller arrives and takes the 2 kept calls.
  assert.equal(spendAll(calls, limits, now, A).got, 8);
  assert.equal(spendAll(calls, limits, now, B).got, 2);
  // A minute on, the flooder's 8 calls have left the window; the other caller's 2 have not.
  for (const call of calls) if (call.account === A.account) call.at -= minuteOf(limits);
  calls.sort((x, y) => x.at - y.at);
  const got = { [A.account]: 0, [B.account]: 0 };
  for (let open = true; open; ) {
    open = false;
    for (const claimant of [A, B]) {
      const decision = decide({ calls, backedOffUntil: 0 }, limits, now, 0, [claimant]);
      if (!decision.ok) continue;
      calls.push({ at: now, ...claimant });
      got[claimant.account] = (got[claimant.account] ?? 0) + 1;
      open = true;
    }
  }
  // Shares of the 8 open calls: 4 each; the other caller's head start of 2 makes it 4 and 5; one call stays kept.
  assert.deepEqual(got, { [A.account]: 4, [B.account]: 3 });
  assert.equal(calls.filter((c) => c.at > now - minuteOf(limits)).length, 9);
});

test("a share nobody else uses is the spender's: a caller that spent one call leaves the flooder all but that one", () => {
  const limits: BudgetLimits = { perMinute: 10, perDay: 0, minIntervalMs: 0, reserve: 0.2 };
  const now = 6_000_000;
  const calls: LedgerCall[] = [{ at: now - 10, ...B }];
  // 8 open calls, B spent 1: the flooder's share is 7.
  assert.equal(shareIn(calls, A, 8, MINUTE, now).share, 7);
  assert.equal(spendAll(calls, limits, now, A).got, 7);
});

test('with a reserve of 0 one caller may spend the whole window, as before fair shares', () => {
  const calls: LedgerCall[] = [];
  assert.equal(spendAll(calls, { ...LIMITS, reserve: 0 }, 1_000, A).got, 5);
  assert.equal(spendAll([], { ...LIMITS, reserve: undefined }, 1_000, A).got, 5);
});

test('a weight of 2 shares twice what an address of weight 1 does', () => {
  const heavy: Claimant = { account: 'key:agents', weight: 2 };
  const now = 3_000_000;
  // 9 open calls, shared two to one.
  const calls: LedgerCall[] = [
    ...Array.from({ length: 4 }, (_, i) => ({ at: now - 20 + i, ...B })),
    ...Array.from({ length: 5 }, (_, i) => ({ at: now - 9 + i, ...heavy })),
  ];
  // The key's share is 6 (two thirds); it spent only 5 of them, so the address may have the rest, 4.
  assert.deepEqual([shareIn(calls, heavy, 9, MINUTE, now).share, shareIn(calls, B, 9, MINUTE, now).share], [6, 4]);
  assert.equal(shareIn(calls, heavy, 9, MINUTE, now).spent, 5, 'below its share of 6');
});

test("a stream topic's poll is put to the first of its holders that may have the call", () => {
  const calls: LedgerCall[] = [];
  const now = 4_000_000;
  spendAll(calls, LIMITS, now, A);
  const decision = decide({ calls, backedOffUntil: 0 }, LIMITS, now, 0, [A, B]);
  assert.ok(decision.ok);
  assert.equal(decision.ok && decision.claimant, 1, 'B, below its share, is charged; A is not');
  const nobody = decide({ calls, backedOffUntil: 0 }, LIMITS, now, 0, [A]);
  assert.ok(!nobody.ok && nobody.hold === 'minute');
});

test('pacing still applies: a slot a little ahead is waited for, within the pacing bound', () => {
  const limits: BudgetLimits = { perMinute: 5, perDay: 500, minIntervalMs: 1_000, reserve: 0.25 };
  const now = 10_000_000;
  const calls: LedgerCall[] = [{ at: now - 500, ...A }];
  const decision = decide({ calls, backedOffUntil: 0 }, limits, now, 3_000, [A]);
  assert.ok(decision.ok && decision.at === now + 500);
});

/** A ledger of calls by up to four accounts over the last two minutes, ascending. */
const ledgers = fc
  .array(fc.record({ ago: fc.integer({ min: 0, max: 2 * MINUTE }), who: fc.integer({ min: 0, max: 3 }) }), { maxLength: 14 })
  .map((entries) =>
    entries
      .map(({ ago, who }) => ({ ago, who }))
      .sort((a, b) => b.ago - a.ago)
      .map(({ ago, who }) => ({ at: 50_000_000 - ago, account: `caller-${who}`, weight: who === 3 ? 2 : 1 })),
  );

test("property: a slot is given only within the limits and below the caller's share; a refusal for its share only at or above it", () => {
  const now = 50_000_000;
  fc.assert(
    fc.property(ledgers, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 2, max: 12 }), (calls, who, perMinute) => {
      const limits: BudgetLimits = { perMinute, perDay: 0, minIntervalMs: 0, reserve: 0.25 };
      const claimant = { account: `caller-${who}`, weight: who === 3 ? 2 : 1 };
      const decision = decide({ calls, backedOffUntil: 0 }, limits, now, 0, [claimant]);
      const open = perMinute - reservedCalls(perMinute, 0.25);
      const { spent, share } = shareIn(calls, claimant, open, minuteOf(limits), now);
      if (decision.ok) {
        assert.ok(countSince(calls, now - minuteOf(limits)) < perMinute, 'never past the limit');
        assert.ok(spent < share, 'never past its share');
      } else if (decision.hold === 'budget') {
        assert.ok(nextSlot({ calls, backedOffUntil: 0 }, limits, now) > now);
      } else {
        assert.ok(spent >= share, 'refused for its share only at or above it');
        assert.ok(decision.retryAt > now);
      }
      // Whatever the others spent, a caller's share of the open calls is at least an equal part of them.
      const callers = new Set(calls.filter((c) => c.at > now - minuteOf(limits)).map((c) => c.account)).add(claimant.account);
      assert.ok(share >= (open * claimant.weight) / (claimant.weight + 2 * (callers.size - 1)) - 1e-9);
    }),
    { numRuns: 2_000 },
  );
});
