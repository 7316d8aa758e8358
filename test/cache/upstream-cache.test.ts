import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { RedisFlightLock } from '../../src/cache/flight-lock.js';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import { RedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { SqliteCacheStore } from '../../src/cache/sqlite-cache-store.js';
import { UpstreamCache } from '../../src/cache/upstream-cache.js';
import { MemoryBudgetGuard } from '../../src/budget/memory-budget-guard.js';
import { addressCaller, runAs } from '../../src/core/caller.js';
import {
  ApiError,
  BudgetExhaustedError,
  CallerShareSpentError,
  NotFoundAnswerError,
  PlanRefusalError,
  UpstreamRefusalError,
  UpstreamTransportError,
} from '../../src/core/errors.js';
import { openStateDatabase } from '../../src/store/state-database.js';
import { UpstreamHealth } from '../../src/health/upstream-health.js';
import { tempDir } from '../helpers/config.js';
import { redisPrefix, sharedStore } from '../store/redis-helper.js';

const logger = pino({ level: 'silent' });
const WINDOW = { freshMs: 60_000, staleMs: 600_000 };
const OPTS = { upstream: 'test' };

function memory(): MemoryCacheStore {
  return new MemoryCacheStore({ maxEntries: 100, maxBytes: 1_000_000 });
}

function embeddedCache(t: import('node:test').TestContext, dir = tempDir(t), notFoundMs?: number) {
  const db = openStateDatabase(dir);
  const l2 = new SqliteCacheStore(db, { maxEntries: 100, maxBytes: 1_000_000 });
  t.after(() => {
    l2.close();
    db.close();
  });
  const health = new UpstreamHealth();
  return { cache: new UpstreamCache({ memory: memory(), logger, health, l2, notFoundMs }), l2, health, dir };
}

/** CACHE_NOT_FOUND_SECONDS' default. */
const HOUR_MS = 3_600_000;

/** A loader answering as the provider does for a symbol it has no data for, counting its calls. */
function notFoundLoader(message = 'no quote for this symbol') {
  const loader = {
    calls: 0,
    load: async (): Promise<never> => {
      loader.calls += 1;
      throw new NotFoundAnswerError(message);
    },
  };
  return loader;
}

/** Two replicas' caches on one Redis prefix, with the cross-replica flight lock. */
function redisReplicas(t: import('node:test').TestContext, notFoundMs?: number): Promise<UpstreamCache[]> {
  const prefix = redisPrefix(t);
  return Promise.all(
    [0, 1].map(async () => {
      const shared = await sharedStore(t, prefix);
      const l2 = new RedisCacheStore(shared);
      return new UpstreamCache({
        memory: memory(),
        logger,
        health: new UpstreamHealth(),
        l2,
        lock: new RedisFlightLock(shared),
        lockTtlMs: 5_000,
        notFoundMs,
      });
    }),
  );
}

/** A loader that counts its calls and resolves when the test says so. */
function gatedLoader<T>(value: T) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const loader = {
    calls: 0,
    release,
    load: async () => {
      loader.calls += 1;
      await gate;
      return value;
    },
  };
  return loader;
}

test('1,000 concurrent misses for one key share one load; later reads are hits', async (t) => {
  const { cache } = embeddedCache(t);
  const loader = gatedLoader({ price: 1 });
  const pending = Array.from({ length: 1000 }, () => cache.fetch('k', WINDOW, loader.load, OPTS));
  await new Promise((resolve) => setImmediate(resolve));
  loader.release();
  const results = await Promise.all(pending);
  assert.equal(loader.calls, 1);
  assert.ok(results.every((r) => r.status === 'MISS' && r.entry === results[0]?.entry));
  const again = await cache.fetch('k', WINDOW, loader.load, OPTS);
  assert.equal(again.status, 'HIT');
  assert.equal(loader.calls, 1);
  assert.equal(cache.counters.singleFlightWaits, 999);
});

test('a stale entry is served at once while one background refresh runs', async (t) => {
  const { cache } = embeddedCache(t);
  const window = { freshMs: 0, staleMs: 60_000 };
  await cache.fetch('k', window, async () => 'old', OPTS);
  const loader = gatedLoader('new');
  const first = await cache.fetch('k', window, loader.load, OPTS);
  const second = await cache.fetch('k', window, loader.load, OPTS);
  assert.equal(first.status, 'STALE');
  assert.equal(first.entry.value, 'old');
  assert.equal(second.entry.value, 'old');
  assert.equal(loader.calls, 1, 'one refresh for many stale reads');
  loader.release();
  await new Promise((resolve) => setTimeout(resolve, 10));
  const third = await cache.fetch('k', { freshMs: 60_000, staleMs: 60_000 }, loader.load, OPTS);
  assert.equal(third.entry.value, 'new');
});

test('a failed refresh keeps the stale value served and pauses refreshes of that key', async (t) => {
  const { cache } = embeddedCache(t);
  await cache.fetch('x', { freshMs: 1, staleMs: 60_000 }, async () => 'good', OPTS);
  await new Promise((resolve) => setTimeout(resolve, 5));
  let calls = 0;
  const failing = async () => {
    calls += 1;
    throw new ApiError('UPSTREAM_ERROR', 'upstream answered HTTP 503');
  };
  // The pause after a failure is min(5 s, the fresh window): 2 s here, far longer than this loop.
  const window = { freshMs: 2_000, staleMs: 60_000 };
  for (let i = 0; i < 50; i += 1) {
    const result = await cache.fetch('x', window, failing, OPTS);
    assert.equal(result.status, 'STALE');
    assert.equal(result.entry.value, 'good');
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(calls, 1, 'no retry during the back-off');
  assert.equal(cache.counters.refreshFailures, 1);
});

test('errors and budget refusals are never cached; a budget refusal is not an upstream failure', async (t) => {
  const { cache, health } = embeddedCache(t);
  await assert.rejects(
    cache.fetch(
      'k',
      WINDOW,
      async () => {
        throw new BudgetExhaustedError('spent', 30);
      },
      OPTS,
    ),
    BudgetExhaustedError,
  );
  assert.equal(health.state('test').calls, 0);
  await assert.rejects(
    cache.fetch(
      'k',
      WINDOW,
      async () => {
        throw new ApiError('UPSTREAM_ERROR', 'bad');
      },
      OPTS,
    ),
  );
  assert.equal(health.state('test').errors, 1);
  const result = await cache.fetch('k', WINDOW, async () => 'ok', OPTS);
  assert.equal(result.status, 'MISS');
  assert.equal(result.entry.value, 'ok');
});

test('the last good value survives in SQLite and is served by a fresh process-level cache', async (t) => {
  const dir = tempDir(t);
  const db = openStateDatabase(dir);
  const l2 = new SqliteCacheStore(db, { maxEntries: 100, maxBytes: 1_000_000 });
  const first = new UpstreamCache({ memory: memory(), logger, health: new UpstreamHealth(), l2 });
  await first.fetch('k', { freshMs: 50, staleMs: 60_000 }, async () => ({ v: 42 }), OPTS);
  l2.close();
  db.close();

  const { cache } = embeddedCache(t, dir);
  const hit = await cache.fetch('k', { freshMs: 50, staleMs: 60_000 }, async () => ({ v: 0 }), OPTS);
  assert.equal(hit.status, 'HIT');
  assert.deepEqual(hit.entry.value, { v: 42 });
  await new Promise((resolve) => setTimeout(resolve, 60));
  const { cache: later } = embeddedCache(t, dir);
  const stale = await later.fetch(
    'k',
    { freshMs: 50, staleMs: 60_000 },
    async () => {
      throw new ApiError('UPSTREAM_ERROR', 'down');
    },
    OPTS,
  );
  assert.equal(stale.status, 'STALE');
  assert.deepEqual(stale.entry.value, { v: 42 });
});

test('the SQLite tier drops expired rows and stays within its entry bound', async (t) => {
  const db = openStateDatabase(tempDir(t));
  t.after(() => db.close());
  const store = new SqliteCacheStore(db, { maxEntries: 10, maxBytes: 1_000_000 });
  t.after(() => store.close());
  const now = Date.now();
  for (let i = 0; i < 30; i += 1)
    await store.set(`k${i}`, { value: i, storedAt: now, freshUntil: now + 1000, staleUntil: now + 10_000 + i });
  await store.set('gone', { value: 0, storedAt: now - 10, freshUntil: now - 5, staleUntil: now + 1 });
  await new Promise((resolve) => setTimeout(resolve, 5));
  store.sweep();
  assert.ok(store.size <= 10, `size ${store.size}`);
  assert.equal(await store.get('gone'), undefined);
  assert.equal((await store.get<number>('k29'))?.value, 29, 'keeps those with the longest life');
});

test('with Redis, concurrent misses in two replicas cost one load; the loser takes the value from Redis', async (t) => {
  const replicas = await redisReplicas(t);
  let calls = 0;
  const load = async () => {
    calls += 1;
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { price: 7 };
  };
  const results = await Promise.all(replicas.flatMap((cache) => Array.from({ length: 200 }, () => cache.fetch('sym', WINDOW, load, OPTS))));
  assert.equal(calls, 1);
  assert.ok(results.every((r) => (r.entry.value as { price: number }).price === 7));
});

test('with Redis, a failed load fails the waiting replica too instead of a second upstream call', async (t) => {
  const [a, b] = await redisReplicas(t);
  let calls = 0;
  const load = async () => {
    calls += 1;
    await new Promise((resolve) => setTimeout(resolve, 100));
    throw new ApiError('UPSTREAM_ERROR', 'upstream answered HTTP 503');
  };
  const outcomes = await Promise.allSettled([a!.fetch('x', WINDOW, load, OPTS), b!.fetch('x', WINDOW, load, OPTS)]);
  assert.equal(calls, 1);
  for (const outcome of outcomes) {
    assert.equal(outcome.status, 'rejected');
    assert.equal((outcome as PromiseRejectedResult).reason.code, 'UPSTREAM_ERROR');
  }
});

test('with Redis unreachable the cache still answers from its own tier and loads locally', async (t) => {
  const prefix = redisPrefix(t);
  const shared = await sharedStore(t, prefix, 'redis://127.0.0.1:1');
  assert.equal(shared.redis.ready, false);
  const cache = new UpstreamCache({
    memory: memory(),
    logger,
    health: new UpstreamHealth(),
    l2: new RedisCacheStore(shared),
    lock: new RedisFlightLock(shared),
  });
  let calls = 0;
  const load = async () => {
    calls += 1;
    return 'v';
  };
  const results = await Promise.all(Array.from({ length: 50 }, () => cache.fetch('k', WINDOW, load, OPTS)));
  assert.equal(calls, 1);
  assert.ok(results.every((r) => r.entry.value === 'v'));
  assert.equal((await cache.fetch('k', WINDOW, load, OPTS)).status, 'HIT');
});

test('revalidate (a stream poller): a stale entry waits for its one shared refresh; a failed refresh answers stale and pauses', async (t) => {
  const { cache } = embeddedCache(t);
  const short = { freshMs: 20, staleMs: 600_000 };
  await cache.fetch('r', short, async () => ({ v: 1 }), OPTS);
  await new Promise((resolve) => setTimeout(resolve, 30));
  const loader = gatedLoader({ v: 2 });
  const waiting = [
    cache.fetch('r', short, loader.load, { ...OPTS, revalidate: true }),
    cache.fetch('r', short, loader.load, { ...OPTS, revalidate: true }),
  ];
  // A request meanwhile is answered stale at once, and joins the same refresh rather than starting one.
  const request = await cache.fetch('r', short, loader.load, OPTS);
  assert.deepEqual([request.status, request.entry.value], ['STALE', { v: 1 }]);
  loader.release();
  const results = await Promise.all(waiting);
  assert.equal(loader.calls, 1);
  assert.deepEqual(
    results.map((r) => [r.status, r.entry.value]),
    [
      ['MISS', { v: 2 }],
      ['MISS', { v: 2 }],
    ],
  );

  const now = Date.now();
  await cache.store.set('p', { value: { v: 2 }, storedAt: now - 10_000, freshUntil: now - 5_000, staleUntil: now + 600_000 });
  let failures = 0;
  const failing = async () => {
    failures += 1;
    throw new ApiError('UPSTREAM_ERROR', 'down');
  };
  const window = { freshMs: 5_000, staleMs: 600_000 };
  const stale = await cache.fetch('p', window, failing, { ...OPTS, revalidate: true });
  assert.deepEqual([stale.status, stale.entry.value], ['STALE', { v: 2 }]);
  // The failed key is paused (5 s here): the next poll does not call again at once.
  const paused = await cache.fetch('p', window, failing, { ...OPTS, revalidate: true });
  assert.equal(paused.status, 'STALE');
  assert.equal(failures, 1);
});

test('an upstream\'s "not found" is remembered in both tiers: the same code and message, no call, until its window ends', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const dir = tempDir(t);
  const { cache } = embeddedCache(t, dir, HOUR_MS);
  const loader = notFoundLoader();
  const first = await cache.fetch('q', WINDOW, loader.load, OPTS).catch((e: unknown) => e);
  assert.ok(first instanceof NotFoundAnswerError);
  assert.deepEqual([first.code, first.message, first.remembered?.cache], ['SYMBOL_NOT_FOUND', 'no quote for this symbol', 'MISS']);
  assert.equal(first.remembered?.until, Date.now() + HOUR_MS);
  const again = await cache.fetch('q', WINDOW, loader.load, OPTS).catch((e: unknown) => e);
  assert.ok(again instanceof NotFoundAnswerError);
  assert.deepEqual([again.code, again.message, again.remembered?.cache], [first.code, first.message, 'HIT']);
  assert.equal(again.headers['x-cache'], 'HIT');
  assert.equal(loader.calls, 1);
  assert.equal(cache.counters.notFound, 1);

  // The second tier holds it: a new process on the same store remembers it too.
  const { cache: restarted } = embeddedCache(t, dir, HOUR_MS);
  await assert.rejects(restarted.load('q', WINDOW, loader.load, OPTS), { code: 'SYMBOL_NOT_FOUND', message: first.message });
  assert.equal(loader.calls, 1);

  t.mock.timers.tick(HOUR_MS);
  await assert.rejects(restarted.fetch('q', WINDOW, loader.load, OPTS), NotFoundAnswerError);
  assert.equal(loader.calls, 2, 'asked again once the window is over');
});

test('a "not found" never hides a stale value: served stale while its refresh is told "not found", and kept', async (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
  const { cache } = embeddedCache(t, undefined, HOUR_MS);
  const now = Date.now();
  await cache.store.set('s', { value: 'good', storedAt: now - 10_000, freshUntil: now - 5_000, staleUntil: now + 600_000 });
  const loader = notFoundLoader();
  const stale = await cache.fetch('s', WINDOW, loader.load, OPTS);
  assert.deepEqual([stale.status, stale.entry.value], ['STALE', 'good']);
  // The refresh runs in the background; its "not found" is remembered beside the value, not over it.
  await assert.rejects(cache.load('s', WINDOW, loader.load, OPTS), NotFoundAnswerError);
  assert.equal(loader.calls, 1);
  assert.equal((await cache.peek('s'))?.value, 'good');
  const polled = await cache.fetch('s', WINDOW, loader.load, { ...OPTS, revalidate: true });
  assert.deepEqual([polled.status, polled.entry.value], ['STALE', 'good']);
  // Past a failed refresh's usual pause (5 s), the refresh stays paused while the "not found" is remembered.
  t.mock.timers.tick(10_000);
  const later = await cache.fetch('s', WINDOW, loader.load, OPTS);
  assert.deepEqual([later.status, later.entry.value], ['STALE', 'good']);
  assert.deepEqual([loader.calls, cache.counters.refreshes], [1, 1], 'no call, no refresh, while it is remembered');
});

test('only a "not found" is remembered: limit answers, refusals, failures and a not-found the provider did not say are asked again', async (t) => {
  const { cache } = embeddedCache(t, undefined, HOUR_MS);
  const errors: [string, () => ApiError][] = [
    ['limit body', () => new UpstreamRefusalError('Alpha Vantage per-minute call limit reached', 60)],
    ['budget', () => new BudgetExhaustedError('spent', 30)],
    ['premium', () => new PlanRefusalError('premium')],
    ['5xx', () => new ApiError('UPSTREAM_ERROR', 'Alpha Vantage answered HTTP 503')],
    ['timeout', () => new UpstreamTransportError('Alpha Vantage', 'timeout', new Error('timed out'))],
    ['not said by the provider', () => new ApiError('SYMBOL_NOT_FOUND', 'Yahoo has no data for X')],
  ];
  for (const [name, error] of errors) {
    let calls = 0;
    const load = async (): Promise<never> => {
      calls += 1;
      throw error();
    };
    for (let i = 0; i < 2; i += 1) await assert.rejects(cache.load(name, WINDOW, load, OPTS));
    assert.equal(calls, 2, name);
  }
  assert.equal(cache.counters.notFound, 0);
});

test('CACHE_NOT_FOUND_SECONDS=0: a "not found" is asked every time', async (t) => {
  const { cache } = embeddedCache(t, undefined, 0);
  const loader = notFoundLoader();
  for (let i = 0; i < 2; i += 1) await assert.rejects(cache.fetch('z', WINDOW, loader.load, OPTS), { remembered: undefined });
  assert.equal(loader.calls, 2);
});

test('with Redis, the "not found" one replica was told answers the other, without a call, waiting on its flight or after', async (t) => {
  const [a, b] = await redisReplicas(t, HOUR_MS);
  let calls = 0;
  const load = async (): Promise<never> => {
    calls += 1;
    await new Promise((resolve) => setTimeout(resolve, 100));
    throw new NotFoundAnswerError('Alpha Vantage has no OVERVIEW data for this symbol');
  };
  const outcomes = await Promise.allSettled([a!.fetch('nf', WINDOW, load, OPTS), b!.fetch('nf', WINDOW, load, OPTS)]);
  assert.equal(calls, 1);
  for (const outcome of outcomes) {
    const reason = (outcome as PromiseRejectedResult).reason;
    assert.ok(reason instanceof NotFoundAnswerError, String(reason));
    assert.equal(reason.message, 'Alpha Vantage has no OVERVIEW data for this symbol');
    assert.ok(reason.remembered !== undefined, 'the waiter knows until when');
  }
  const later = await b!.fetch('nf', WINDOW, load, OPTS).catch((e: unknown) => e);
  assert.equal((later as NotFoundAnswerError).remembered?.cache, 'HIT');
  assert.equal(calls, 1);
});

test("a single flight refused for its starter's spent share is not another caller's answer: the joiner loads on its own account", async (t) => {
  const { cache } = embeddedCache(t);
  const guard = new MemoryBudgetGuard('alphaVantage', { perMinute: 4, perDay: 0, minIntervalMs: 0, reserve: 0.25 });
  const flooder = addressCaller('203.0.113.9');
  const dashboard = addressCaller('198.51.100.4');
  // The flooder has spent all but the call kept for callers below their share.
  await runAs([flooder], async () => {
    for (let i = 0; i < 3; i += 1) await guard.acquire();
  });
  const loader = gatedLoader('IBM at 170');
  const spending = async () => {
    const value = await loader.load();
    await guard.acquire();
    return value;
  };
  const flooderAsks = runAs([flooder], () => cache.fetch('IBM', WINDOW, spending, OPTS));
  const dashboardAsks = runAs([dashboard], () => cache.fetch('IBM', WINDOW, spending, OPTS));
  loader.release();
  const [refused, served] = await Promise.allSettled([flooderAsks, dashboardAsks]);
  assert.ok(refused.status === 'rejected' && refused.reason instanceof CallerShareSpentError, String(refused));
  assert.ok(served.status === 'fulfilled' && served.value.entry.value === 'IBM at 170', String(served));
  assert.equal(loader.calls, 2, 'the dashboard loaded again, as itself');
  assert.deepEqual([...guard.tally.calls], [['anonymous', 4]]);
});
