import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountOf, addressCaller, currentCallers, noteHeld, runAs, runWork, SERVICE, type Work } from '../../src/core/caller.js';

test('an address is its own account; an IPv6 address counts as its /64, the block one host is given', () => {
  assert.equal(accountOf('203.0.113.7'), '203.0.113.7');
  assert.equal(accountOf('::ffff:203.0.113.7'), '203.0.113.7', 'IPv4-mapped: the IPv4 caller');
  assert.equal(accountOf('::1'), '::1');
  assert.equal(accountOf('2001:db8:1:2:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  assert.equal(accountOf('2001:0db8:0001:0002::1'), '2001:db8:1:2::/64', 'leading zeros do not make another account');
  assert.equal(accountOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(accountOf('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  assert.equal(accountOf(undefined), 'unknown');
  assert.equal(addressCaller('2001:db8:1:2::9').account, addressCaller('2001:db8:1:2::a').account);
  assert.equal(addressCaller('203.0.113.7'), addressCaller('203.0.113.7'), 'one object per address, reused');
  assert.equal(addressCaller('203.0.113.7').label, 'anonymous', 'metrics never see an address');
});

test('work runs as the callers it was started for, through awaits and timers; nobody asked is the service', async () => {
  const caller = addressCaller('198.51.100.1');
  assert.deepEqual(currentCallers(), [SERVICE]);
  const seen = await runAs([caller], async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    return currentCallers();
  });
  assert.deepEqual(seen, [caller]);
  const work: Work = { callers: [caller] };
  await runWork(work, async () => {
    await Promise.resolve();
    noteHeld(5_000);
    noteHeld(3_000);
  });
  assert.equal(work.heldUntil, 5_000, 'the latest moment a share returns');
});
