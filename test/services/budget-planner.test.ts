import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeEntry } from '../../src/cache/cache-store.js';
import { addressCaller, runAs } from '../../src/core/caller.js';
import { BudgetPlanner } from '../../src/services/budget-planner.js';
import { DemandTracker } from '../../src/services/demand-tracker.js';

const MINUTE = 60_000;

function clock(start = 1_000_000) {
  const c = { now: start, fn: () => c.now };
  return c;
}

test('demand decays with its half-life and ranks keys by it', () => {
  const c = clock();
  const demand = new DemandTracker(10 * MINUTE, c.fn);
  for (let i = 0; i < 8; i += 1) demand.note('HOT');
  demand.note('COLD');
  assert.equal(demand.value('HOT'), 8);
  c.now += 10 * MINUTE;
  assert.ok(Math.abs(demand.value('HOT') - 4) < 1e-9);
  c.now += 1_000;
  assert.equal(demand.rank('HOT'), 0);
  assert.equal(demand.rank('COLD'), 1);
  assert.equal(demand.rank('NEVER'), 2);
  // A burst fades: 20 old requests rank below 3 recent ones an hour later.
  for (let i = 0; i < 20; i += 1) demand.note('BURST');
  c.now += 60 * MINUTE;
  for (let i = 0; i < 3; i += 1) demand.note('STEADY');
  c.now += 1_000;
  assert.ok(demand.rank('STEADY') < demand.rank('BURST'));
});

test('the hot set is as many keys as the budget keeps fresh, per minute and per day', () => {
  const fresh = MINUTE;
  assert.equal(new BudgetPlanner({ perMinute: 5, perDay: 0, minIntervalMs: 0 }, fresh).hot, 4, '5 a minute with the 2 % counting margin');
  assert.equal(
    new BudgetPlanner({ perMinute: 5, perDay: 500, minIntervalMs: 0 }, fresh).hot,
    1,
    '500 a day keeps not even one key fresh all day: the hottest one',
  );
  assert.equal(new BudgetPlanner({ perMinute: 75, perDay: 0, minIntervalMs: 0 }, fresh).hot, 73);
  assert.equal(new BudgetPlanner({ perMinute: 0, perDay: 0, minIntervalMs: 0 }, fresh).hot, Number.POSITIVE_INFINITY);
});

test('only hot keys are refreshed, early in their last tenth, and not while callers with nothing are refused', () => {
  const c = clock();
  const planner = new BudgetPlanner({ perMinute: 5, perDay: 0, minIntervalMs: 0 }, MINUTE, c.fn);
  for (const [key, n] of [
    ['A', 9],
    ['B', 8],
    ['C', 7],
    ['D', 6],
    ['E', 1],
  ] as const)
    for (let i = 0; i < n; i += 1) planner.note(key);
  const entry = makeEntry('v', { freshMs: MINUTE, staleMs: MINUTE }, c.now);
  assert.equal(planner.mayRefresh('A', entry), false, 'early in its fresh window');
  c.now += 0.95 * MINUTE;
  assert.equal(planner.mayRefresh('A', entry), true, 'in the last tenth');
  assert.equal(planner.mayRefresh('E', { ...entry, freshUntil: c.now - 1 }), false, 'not among the hottest four');
  planner.noteRefusal('X');
  assert.equal(planner.mayRefresh('A', entry), false, 'a caller with no value was just refused');
  c.now += 1.1 * MINUTE;
  assert.equal(planner.mayRefresh('A', entry), true);
});

test('among keys with no value, the hottest one refused lately gets the next call', () => {
  const c = clock();
  const planner = new BudgetPlanner({ perMinute: 5, perDay: 0, minIntervalMs: 0 }, MINUTE, c.fn);
  for (let i = 0; i < 5; i += 1) planner.note('HOT');
  planner.note('TAIL');
  assert.equal(planner.mayLoad('TAIL'), true, 'nobody hotter is waiting');
  planner.noteRefusal('HOT');
  assert.equal(planner.mayLoad('TAIL'), false, 'HOT waits for its first value');
  assert.equal(planner.mayLoad('HOT'), true);
  planner.noteLoaded('HOT');
  assert.equal(planner.mayLoad('TAIL'), true);
  planner.noteRefusal('HOT');
  c.now += 1.1 * MINUTE;
  assert.equal(planner.mayLoad('TAIL'), true, 'a refusal a minute old no longer holds the budget');
});

test("a key one caller floods while it waits for a value holds back that caller's other keys, not another caller's first call", () => {
  const c = clock();
  const planner = new BudgetPlanner({ perMinute: 5, perDay: 500, minIntervalMs: 0 }, MINUTE, c.fn);
  const flooder = addressCaller('203.0.113.9');
  const newcomer = addressCaller('198.51.100.4');
  runAs([flooder], () => {
    for (let i = 0; i < 100; i += 1) planner.note('JUNK');
    planner.noteRefusal('JUNK');
    planner.note('OTHER');
  });
  runAs([newcomer], () => planner.note('IBM'));
  assert.equal(
    runAs([newcomer], () => planner.mayLoad('IBM')),
    true,
    "JUNK is hotter only through the flooder's requests: the newcomer's key takes a call of its own share",
  );
  assert.equal(
    runAs([flooder], () => planner.mayLoad('OTHER')),
    false,
    "the flooder's cooler key waits behind its own hottest",
  );
  assert.equal(planner.mayLoad('IBM'), false, "work for nobody is judged by every caller's demand, as before");
  assert.equal(
    runAs([newcomer, flooder], () => planner.mayLoad('IBM')),
    false,
    'a topic held by both: JUNK is hotter for one of its holders',
  );
});

test("one caller's many requests cannot push another caller's keys out of the hot set: each caller's hottest keys stay hot for it", () => {
  const c = clock();
  // A budget that keeps one key fresh.
  const planner = new BudgetPlanner({ perMinute: 5, perDay: 500, minIntervalMs: 0 }, 60_000, c.fn);
  assert.equal(planner.hot, 1);
  const flooder = addressCaller('203.0.113.9');
  const dashboard = addressCaller('198.51.100.4');
  runAs([flooder], () => {
    for (let i = 0; i < 100; i += 1) planner.note('JUNK1');
    for (let i = 0; i < 50; i += 1) planner.note('JUNK2');
  });
  runAs([dashboard], () => planner.note('IBM'));
  c.now += 1_000;
  assert.equal(
    runAs([dashboard], () => planner.isHot('IBM')),
    true,
    'the dashboard key is hot for the dashboard',
  );
  assert.equal(
    runAs([addressCaller('192.0.2.1')], () => planner.isHot('IBM')),
    false,
    'not for another caller',
  );
  assert.equal(
    runAs([flooder], () => planner.isHot('JUNK2')),
    false,
    "the flooder's second key is hot for no one",
  );
  assert.equal(planner.isHot('JUNK1'), true, 'the hottest of all is hot for everyone');
});
