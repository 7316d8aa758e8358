import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RequestPacer } from '../../src/broker/request-pacer.js';
import { ApiError } from '../../src/core/errors.js';

function pacer(now: { t: number }, extra: Partial<ConstructorParameters<typeof RequestPacer>[0]> = {}): RequestPacer {
  return new RequestPacer({ name: 'the gateway', perWindow: 3, windowMs: 1_000, maxWaitMs: 0, now: () => now.t, ...extra });
}

async function refused(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiError);
    return error;
  }
  assert.fail('expected a refusal');
}

test('at most perWindow calls start in any window; a call that would wait too long is refused with Retry-After', async () => {
  const now = { t: 10_000 };
  const p = pacer(now);
  for (let i = 0; i < 3; i += 1) await p.acquire();
  const error = await refused(p.acquire());
  assert.equal(error.code, 'BROKER_UNAVAILABLE');
  assert.equal(error.retryAfterSeconds, 1);
  now.t += 1_001;
  await p.acquire();
});

test('a keyed spacing (IBKR /portfolio/accounts once per 5 s) holds apart calls of that key only', async () => {
  const now = { t: 0 };
  const p = pacer(now, { perWindow: 100, spacing: { '/portfolio/accounts': 5_000 } });
  await p.acquire('/portfolio/accounts');
  await p.acquire('/other');
  const error = await refused(p.acquire('/portfolio/accounts'));
  assert.equal(error.retryAfterSeconds, 5);
  now.t = 5_000;
  await p.acquire('/portfolio/accounts');
});

test('a refusal backs off every caller: Retry-After when given, else an escalating wait, reset by a success', async () => {
  const now = { t: 0 };
  const p = pacer(now, { perWindow: 100, baseBackOffMs: 2_000 });
  assert.equal(p.refused(7), 7_000);
  const error = await refused(p.acquire());
  assert.match(error.message, /slow down/);
  assert.equal(error.retryAfterSeconds, 7);
  now.t = 7_000;
  await p.acquire();
  p.succeeded();
  const first = p.refused();
  const second = p.refused();
  assert.ok(first >= 2_000 && first <= 2_400, String(first));
  assert.ok(second >= 4_000 && second <= 4_800, String(second));
  p.succeeded();
  now.t += 10_000;
  assert.ok(p.refused() <= 2_400);
});

test('a minimum interval spreads a burst evenly', async () => {
  const now = { t: 0 };
  const p = pacer(now, { perWindow: 100, minIntervalMs: 100 });
  await p.acquire();
  const error = await refused(p.acquire());
  assert.match(error.message, /saturated/);
  now.t = 100;
  await p.acquire();
});

test('calls whose slots come due together after a blocked event loop still leave spaced apart', async () => {
  const p = new RequestPacer({ name: 'the gateway', perWindow: 8, windowMs: 1_000, minIntervalMs: 125, maxWaitMs: 10_000 });
  await p.acquire();
  const left: number[] = [];
  const calls = Array.from({ length: 3 }, () => p.acquire().then(() => left.push(Date.now())));
  // The slots at 125, 250 and 375 ms all come due while the loop is blocked.
  const blockedUntil = Date.now() + 500;
  while (Date.now() < blockedUntil);
  await Promise.all(calls);
  const gaps = left.slice(1).map((at, i) => at - (left[i] as number));
  assert.ok(
    gaps.every((gap) => gap >= 120),
    `gaps between departures: ${gaps.join(', ')} ms`,
  );
});

test("a keyed call's spacing counts from the slot it got behind a queue, not from when it asked", async () => {
  const now = { t: 0 };
  const p = pacer(now, { perWindow: 100, minIntervalMs: 1_000, spacing: { '/portfolio/accounts': 1_500 }, maxWaitMs: 2_400 });
  await p.acquire();
  // Asked at 0, but its slot is at 1 000: the next one's turn is 2 500, beyond the longest wait.
  const first = p.acquire('/portfolio/accounts');
  const error = await refused(p.acquire('/portfolio/accounts'));
  assert.match(error.message, /once per 1.5 s/);
  assert.equal(error.retryAfterSeconds, 3);
  await first;
});
