// The one degraded-mode policy, concept by concept, on a Redis that goes away and comes back (a TCP proxy
// cut and reopened): replica A reaches Redis through the proxy, replica B directly. While A has lost Redis
// the policy answers "local" for every concept and each behaves as src/store/degraded-mode.ts says; once
// Redis returns every concept shares again, seen from B.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type TestContext, test } from 'node:test';
import pino from 'pino';
import { StreamTickets } from '../../src/broker/stream-tickets.js';
import { RedisFlightLock } from '../../src/cache/flight-lock.js';
import { RedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { callerLimiter } from '../../src/plugins/external/rate-limit.js';
import type { SharedConcept, SharedStore } from '../../src/store/degraded-mode.js';
import type { LiveTopics } from '../../src/stream/live-topics.js';
import { TopicRelay } from '../../src/stream/topic-relay.js';
import { redisPrefix, sharedStore } from './redis-helper.js';
import { startProxy } from './tcp-proxy.js';

const CONCEPTS: SharedConcept[] = [
  'cache',
  'flight-lock',
  'budgets',
  'pacing',
  'rate-limit',
  'stream-leases',
  'stream-tickets',
  'cursor-key',
];

function concepts(t: TestContext, shared: SharedStore) {
  const limiter = callerLimiter(100, shared);
  assert.ok(limiter !== undefined);
  const relay = new TopicRelay({ shared, topics: {} as LiveTopics, logger: pino({ level: 'silent' }), scopeOf: () => 'sandbox:test' });
  t.after(() => relay.close());
  return {
    cache: new RedisCacheStore(shared),
    lock: new RedisFlightLock(shared),
    tickets: new StreamTickets(shared),
    relay,
    hit: (key: string) =>
      new Promise<number>((resolve, reject) =>
        limiter.incr(key, (error, result) => (error ? reject(error) : resolve(result?.current as number)), 60_000),
      ),
  };
}

const entry = (value: number) => ({ value, storedAt: Date.now(), freshUntil: Date.now() + 60_000, staleUntil: Date.now() + 60_000 });

test('every shared concept follows the one policy: local while Redis is lost, shared again once it returns', async (t) => {
  const prefix = redisPrefix(t);
  const proxy = await startProxy(t);
  const [sa, sb] = await Promise.all([sharedStore(t, prefix, proxy.url), sharedStore(t, prefix)]);
  const a = concepts(t, sa);
  const b = concepts(t, sb);

  const sharing = async (round: string) => {
    assert.deepEqual(
      CONCEPTS.filter((c) => !sa.degraded.shares(c)),
      [],
      `${round}: every concept shares`,
    );
    await a.cache.set(`${round}:cached`, entry(1));
    assert.equal((await b.cache.get(`${round}:cached`))?.value, 1, 'cache: written by A, read by B');
    assert.equal((await a.lock.tryAcquire(`${round}:load`, 5_000)).kind, 'acquired');
    assert.equal((await b.lock.tryAcquire(`${round}:load`, 5_000)).kind, 'held', 'flight lock: one loader for both');
    assert.deepEqual([await a.hit(`${round}:caller`), await b.hit(`${round}:caller`)], [1, 2], 'rate limit: one window for both');
    const { ticket } = await a.tickets.issue();
    assert.equal(await b.tickets.redeem(ticket), true, 'stream ticket: issued on A, redeemed on B');
    assert.equal(await a.relay.hold(`${round}:topic`), true);
    assert.equal(await b.relay.hold(`${round}:topic`), false, 'stream lease: one holder');
  };

  await sharing('before');
  await a.cache.set('kept', entry(2));

  await proxy.cut();
  if (sa.redis.ready) await once(sa.redis, 'state:down');
  assert.deepEqual(
    CONCEPTS.filter((c) => sa.degraded.shares(c)),
    [],
    'lost: no concept shares',
  );
  assert.equal(await a.cache.get('kept'), undefined, 'cache: a miss (the in-process tier answers in front of it)');
  await a.cache.set('lost:cached', entry(3));
  assert.equal(await b.cache.get('lost:cached'), undefined, 'cache: the write is skipped');
  assert.equal((await a.lock.tryAcquire('lost:load', 5_000)).kind, 'unavailable', 'flight lock: load locally');
  assert.deepEqual(
    [await a.hit('lost:caller'), await a.hit('lost:caller'), await b.hit('lost:caller')],
    [1, 2, 1],
    'rate limit: windows in process',
  );
  const alone = await a.tickets.issue();
  const other = await a.tickets.issue();
  assert.equal(await b.tickets.redeem(other.ticket), false, 'stream ticket: not known to the other replicas');
  assert.equal(await a.tickets.redeem(alone.ticket), true, 'stream ticket: redeemed on the replica that issued it');
  assert.equal(await a.relay.hold('lost:topic'), undefined, 'stream lease: Redis cannot say (the replica polls for its own viewers)');

  await proxy.open();
  await once(sa.redis, 'state:ready');
  await sharing('after');
});
