// The broker pacer shared through a real Redis: replicas together keep the window, the spacing, the keyed
// spacing and a back-off; without Redis a replica paces alone at its share, after one whole window.
// maxWaitMs 0 turns "would have to wait" into a refusal, so counts are exact and need no clock luck.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import type { RequestPacerOptions } from '../../src/broker/request-pacer.js';
import { SharedRequestPacer } from '../../src/broker/shared-request-pacer.js';
import { ApiError } from '../../src/core/errors.js';
import { redisPrefix, sharedStore } from '../store/redis-helper.js';
import { startProxy } from '../store/tcp-proxy.js';

const BASE: RequestPacerOptions = { name: 'the gateway', perWindow: 3, windowMs: 60_000, maxWaitMs: 0 };

async function replica(t: TestContext, prefix: string, options: Partial<RequestPacerOptions> = {}, url?: string) {
  const shared = await sharedStore(t, prefix, url);
  return { ...shared, pacer: new SharedRequestPacer({ ...BASE, ...options }, shared, 'ibkr:test') };
}

async function outcome(pacer: SharedRequestPacer, key?: string): Promise<true | ApiError> {
  try {
    await pacer.acquire(key);
    return true;
  } catch (error) {
    assert.ok(error instanceof ApiError && error.code === 'BROKER_UNAVAILABLE', String(error));
    return error;
  }
}

test('three replicas share one window: together they get exactly perWindow slots', async (t) => {
  const prefix = redisPrefix(t);
  const replicas = await Promise.all([0, 1, 2].map(() => replica(t, prefix)));
  const outcomes = await Promise.all(replicas.flatMap(({ pacer }) => Array.from({ length: 5 }, () => outcome(pacer))));
  assert.equal(outcomes.filter((o) => o === true).length, 3);
  const refusal = outcomes.find((o) => o !== true) as ApiError;
  assert.match(refusal.message, /saturated/);
  assert.ok(refusal.retryAfterSeconds! >= 59);
});

test('the spacing and the keyed spacing hold across replicas', async (t) => {
  const prefix = redisPrefix(t);
  const options = { perWindow: 100, minIntervalMs: 30_000, spacing: { '/portfolio/accounts': 5_500 } };
  const [a, b] = await Promise.all([replica(t, prefix, options), replica(t, prefix, options)]);
  assert.equal(await outcome(a!.pacer), true);
  const spaced = await outcome(b!.pacer);
  assert.ok(spaced !== true && spaced.retryAfterSeconds! >= 29, 'spacing of another replica');

  const keyed = await replica(t, redisPrefix(t), { perWindow: 100, spacing: { '/portfolio/accounts': 5_500 } });
  const other = await replica(t, keyed.redis.prefix, { perWindow: 100, spacing: { '/portfolio/accounts': 5_500 } });
  assert.equal(await outcome(keyed.pacer, '/portfolio/accounts'), true);
  const twice = await outcome(other.pacer, '/portfolio/accounts');
  assert.ok(twice !== true && twice.retryAfterSeconds === 6, 'once per 5.5 s whichever replica asks');
  assert.equal(await outcome(other.pacer, '/iserver/accounts'), true, 'other paths are not held');
});

test("one replica's 429 backs off every replica", async (t) => {
  const prefix = redisPrefix(t);
  const [a, b] = await Promise.all([replica(t, prefix, { perWindow: 100 }), replica(t, prefix, { perWindow: 100 })]);
  assert.equal(a!.pacer.refused(7), 7_000);
  const key = a!.redis.key('{pacing:ibkr:test}:backoff');
  while ((await a!.redis.client.pttl(key)) <= 0) await new Promise((resolve) => setImmediate(resolve));
  const refusal = await outcome(b!.pacer);
  assert.ok(refusal !== true && /slow down/.test(refusal.message) && refusal.retryAfterSeconds! >= 6);
});

test('Redis lost: a replica paces alone at its share after one whole window, and hands its slots back', async (t) => {
  const prefix = redisPrefix(t);
  const proxy = await startProxy(t);
  const clock = { t: Date.now() };
  const options = { perWindow: 4, windowMs: 400, now: () => clock.t };
  const a = await replica(t, prefix, options, proxy.url);
  await replica(t, prefix, options);
  await a.heartbeat.beat();
  assert.equal(a.heartbeat.replicas, 2);

  await proxy.cut();
  if (a.redis.ready) await once(a.redis, 'state:down');
  const blind = await outcome(a.pacer);
  assert.ok(blind !== true, 'the others may have filled the window it cannot see');
  assert.equal(a.pacer.mode, 'local-fallback');
  clock.t += 400;
  const alone = await Promise.all(Array.from({ length: 4 }, () => outcome(a.pacer)));
  assert.equal(alone.filter((o) => o === true).length, 2, 'half of 4 for one of 2 replicas');

  await proxy.open();
  await once(a.redis, 'state:ready');
  await outcome(a.pacer);
  assert.equal(a.pacer.mode, 'redis');
  const members = await a.redis.client.zrange(a.redis.key('{pacing:ibkr:test}:slots'), '0', '-1');
  assert.equal(members.filter((m) => m.includes(':alone:')).length, 2, 'the slots taken alone are in the shared set');
});

test("a keyed call's spacing counts from the slot it got, whichever replica asks next", async (t) => {
  const prefix = redisPrefix(t);
  const options = { perWindow: 100, minIntervalMs: 1_000, spacing: { '/portfolio/accounts': 1_500 }, maxWaitMs: 2_400 };
  const [a, b] = await Promise.all([replica(t, prefix, options), replica(t, prefix, options)]);
  assert.equal(await outcome(a!.pacer), true);
  // Its slot is a second away: the next keyed call's turn is 2.5 s away, beyond the longest wait.
  const first = outcome(a!.pacer, '/portfolio/accounts');
  const keyed = a!.redis.key('{pacing:ibkr:test}:keyed');
  while ((await a!.redis.client.hget(keyed, '/portfolio/accounts')) === null) await new Promise((resolve) => setImmediate(resolve));
  const second = await outcome(b!.pacer, '/portfolio/accounts');
  assert.ok(second !== true && /once per 1.5 s/.test(second.message), String(second));
  assert.equal(await first, true);
});

test("a replica held up past its shared slot takes another rather than leave with the next replica's call", async (t) => {
  const { pacer, redis } = await replica(t, redisPrefix(t), { perWindow: 8, windowMs: 1_000, minIntervalMs: 125, maxWaitMs: 10_000 });
  await pacer.acquire(); // the script is loaded: the next one is a single round trip
  const acquired = pacer.acquire();
  // The script answers at once, but the answer waits behind a busy event loop until the slot is long gone.
  const busyUntil = Date.now() + 300;
  while (Date.now() < busyUntil);
  await acquired;
  const slots = await redis.client.zrange(redis.key('{pacing:ibkr:test}:slots'), '0', '-1');
  assert.equal(slots.length, 3, 'the passed slot stays spent, a new one was taken');
});
