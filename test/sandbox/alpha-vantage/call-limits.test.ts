import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallLimits } from '../../../src/sandbox/alpha-vantage/call-limits.js';

const T0 = 1_700_000_000_000;

test('the burst limit forgives an early arrival up to the jitter allowance, no more', () => {
  const limits = new CallLimits({ perMinute: 0, perDay: 0, perSecond: 1 });
  assert.equal(limits.take('k', T0), 'ok');
  assert.equal(limits.take('k', T0 + 899), 'burst');
  assert.equal(limits.take('k', T0 + 900), 'ok');
  const strict = new CallLimits({ perMinute: 0, perDay: 0, perSecond: 1, jitterAllowanceMs: 0 });
  assert.equal(strict.take('k', T0), 'ok');
  assert.equal(strict.take('k', T0 + 999), 'burst');
  assert.equal(strict.take('k', T0 + 1_000), 'ok');
});

test('the minute window holds the limit; refused calls are not recorded', () => {
  const limits = new CallLimits({ perMinute: 3, perDay: 0, perSecond: 0 });
  for (const at of [0, 10_000, 20_000]) assert.equal(limits.take('k', T0 + at), 'ok');
  for (let at = 20_001; at < 59_900; at += 5_000) assert.equal(limits.take('k', T0 + at), 'minute');
  assert.equal(limits.take('k', T0 + 59_899), 'minute');
  assert.equal(limits.take('k', T0 + 59_900), 'ok', 'the first call has left the (allowance-shortened) window');
  assert.equal(limits.take('k', T0 + 60_000), 'minute');
});

test('the daily cap is exact over 24 hours and reported before the shorter limits', () => {
  const limits = new CallLimits({ perMinute: 1, perDay: 2, perSecond: 1 });
  assert.equal(limits.take('k', T0), 'ok');
  assert.equal(limits.take('k', T0 + 1), 'minute');
  assert.equal(limits.take('k', T0 + 60_000), 'ok');
  assert.equal(limits.take('k', T0 + 120_000), 'day');
  assert.equal(limits.take('k', T0 + 86_400_000 - 1), 'day');
  assert.equal(limits.take('k', T0 + 86_400_000), 'ok');
});

test('keys have separate budgets and 0 disables every limit', () => {
  const limits = new CallLimits({ perMinute: 1, perDay: 0, perSecond: 0 });
  assert.equal(limits.take('a', T0), 'ok');
  assert.equal(limits.take('b', T0), 'ok');
  assert.equal(limits.take('a', T0), 'minute');
  const open = new CallLimits({ perMinute: 0, perDay: 0, perSecond: 0 });
  for (let i = 0; i < 1_000; i += 1) assert.equal(open.take('k', T0), 'ok');
});
