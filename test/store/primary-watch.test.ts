// The service's own check of its Redis clients against the primary the deployment names: what it calls a
// fault, and what it does about each on real topologies (an ended client, a Sentinel primary that hangs,
// a Cluster primary lost with nobody asking for its slots).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { RedisBudgetGuard } from '../../src/budget/redis-budget-guard.js';
import { RedisFlightLock } from '../../src/cache/flight-lock.js';
import { RedisCacheStore } from '../../src/cache/redis-cache-store.js';
import type { RedisTarget } from '../../src/core/config.js';
import type { NamedPrimaries } from '../../src/store/primary-probe.js';
import { faultOf } from '../../src/store/primary-watch.js';
import { StateStore } from '../../src/store/state-store.js';
import { tempDir } from '../helpers/config.js';
import { connectRedis, REDIS_URL, redisPrefix, sharedStore } from './redis-helper.js';
import { RedisCluster, RedisSentinelGroup, until } from './redis-topology.js';

const named = (primaries: string[] | null, reachable: boolean): NamedPrimaries => ({
  primaries,
  uses: (inUse) => primaries === null || inUse.join(',') === primaries.join(','),
  reachable: async () => reachable,
});

test('faults: ended at once; away from, or on another than, a named primary that answers; nothing while nobody answers', async () => {
  const p1 = ['10.0.0.1:6379'];
  const cases: [string, string[], NamedPrimaries | undefined, string | undefined][] = [
    ['end', p1, undefined, 'ended'],
    ['end', p1, named(p1, true), 'ended'],
    ['ready', p1, named(p1, true), undefined],
    ['ready', p1, named(['10.0.0.2:6379'], true), 'elsewhere'],
    ['ready', p1, named(['10.0.0.2:6379'], false), undefined],
    ['reconnecting', [], named(p1, true), 'away'],
    ['connecting', [], named(p1, false), undefined],
    ['reconnecting', [], undefined, undefined],
    ['ready', ['127.0.0.1:6379'], named(null, true), undefined],
    ['close', [], named(null, true), 'away'],
  ];
  for (const [status, inUse, deployment, fault] of cases) {
    assert.equal(await faultOf({ status, inUse }, deployment), fault, `${status} on ${inUse} named ${deployment?.primaries}`);
  }
});

test('an ended client, for commands and for pub/sub, is replaced: every user reaches the new one; counted, logged and in the status', async (t) => {
  const prefix = redisPrefix(t);
  const lines: string[] = [];
  const store = await StateStore.open({
    stateDir: tempDir(t),
    redis: { kind: 'redis', url: REDIS_URL },
    redisKeyPrefix: prefix,
    logger: pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }),
    heartbeatMs: 100,
    redisCheckMs: 100,
  });
  t.after(() => store.close());
  const shared = store.shared;
  assert.ok(shared !== undefined);
  const other = await sharedStore(t, prefix);
  const cache = new RedisCacheStore(shared);
  const guard = new RedisBudgetGuard('alphaVantage', { perMinute: 3, perDay: 100, minIntervalMs: 0 }, shared, 100, 'live:av@9');
  const lock = new RedisFlightLock(shared);
  const subscriber = shared.redis.subscriber();
  t.after(() => subscriber.disconnect());
  const heard: string[] = [];
  subscriber.on('message', (_channel: string, text: string) => heard.push(text));
  const channel = `${prefix}channel`;
  await subscriber.subscribe(channel);

  // What ioredis does when it will not reconnect: status "end", for good.
  const ended = [shared.redis.client, subscriber.client];
  const down = once(shared.redis, 'state:down');
  for (const client of ended) client.disconnect();
  await down;
  await until(
    'both clients replaced',
    async () => shared.redis.ready && shared.redis.rescues === 2 && subscriber.client.status === 'ready',
  );
  assert.ok(!ended.includes(shared.redis.client) && !ended.includes(subscriber.client));

  await guard.acquire();
  assert.equal(guard.mode, 'redis', 'budgets decide in the shared ledger');
  await cache.set('after', { value: 1, storedAt: Date.now(), freshUntil: Date.now() + 60_000, staleUntil: Date.now() + 60_000 });
  assert.equal((await new RedisCacheStore(other).get('after'))?.value, 1, 'the cache writes where the other replica reads');
  assert.equal((await lock.tryAcquire('after:load', 5_000)).kind, 'acquired');
  assert.equal((await new RedisFlightLock(other).tryAcquire('after:load', 5_000)).kind, 'held', 'one lock for both');
  const publisher = new Redis(REDIS_URL);
  t.after(() => publisher.disconnect());
  await until('a message through the new pub/sub client', async () => {
    await publisher.publish(channel, 'after');
    return heard.includes('after');
  });

  const status = store.status();
  assert.equal(status.rescues, 2);
  assert.match(status.lastRescue?.reason ?? '', /client had ended/);
  assert.equal(status.fallback, false);
  const logged = lines.map((line) => JSON.parse(line) as { msg: string; client?: string; fault?: string });
  assert.deepEqual(
    logged.filter((l) => l.msg.startsWith('redis client rescued')).map((l) => [l.client, l.fault]),
    [
      ['commands', 'ended'],
      ['pub/sub', 'ended'],
    ],
  );
});

function sentinelTarget(group: RedisSentinelGroup): RedisTarget {
  return {
    kind: 'redis-sentinel',
    sentinels: group.sentinels.map((n) => ({ host: '127.0.0.1', port: n.port })),
    name: RedisSentinelGroup.NAME,
    sentinelPassword: undefined,
    username: undefined,
    password: undefined,
    tls: false,
  };
}

test('a Sentinel primary that hangs (SIGSTOP) keeps our socket open: the watch moves the client to the primary the Sentinels name', async (t) => {
  const group = await RedisSentinelGroup.start();
  t.after(() => group.stop());
  const redis = await connectRedis(t, 'mdp-test:', sentinelTarget(group), 200);
  assert.equal(redis.primary, `127.0.0.1:${group.primary.port}`);
  const client = redis.client;

  group.pause(group.primary);
  await until(
    'the connection on the promoted replica',
    async () => redis.ready && redis.primary === `127.0.0.1:${group.replica.port}`,
    30_000,
  );
  assert.notEqual(redis.client, client, 'a new client, through the Sentinels');
  assert.equal(redis.rescues, 1);
  assert.match(redis.lastRescue?.reason ?? '', /stayed on a primary the Sentinels no longer name: replaced/);
  assert.equal(redis.namedPrimary, `127.0.0.1:${group.replica.port}`);
});

test('a Cluster primary lost while nobody asks for its slots: the replica promoted is in use within a check, one failover counted', async (t) => {
  const cluster = await RedisCluster.start(3, 1);
  t.after(() => cluster.stop());
  const target: RedisTarget = {
    kind: 'redis-cluster',
    nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    username: undefined,
    password: undefined,
    tls: false,
  };
  // No heartbeat and no traffic: no command of ours meets the loss, ioredis has no reason to reload its map.
  const redis = await connectRedis(t, 'mdp-test:', target, 200);
  const before = await cluster.primaries();
  assert.equal(redis.primary, before.join(','));
  const lost = cluster.nodes.find((n) => n.port === Number(before[0]?.split(':')[1]));
  assert.ok(lost !== undefined);
  await cluster.kill(lost);

  await until(
    'the promoted replica in use',
    async () => {
      const now = await cluster.primaries();
      await redis.checkPrimary();
      return now.length === 3 && !now.includes(`127.0.0.1:${lost.port}`) && redis.primary === now.join(',');
    },
    30_000,
  );
  assert.equal(redis.failovers, 1);
  assert.equal(redis.rescues, 0, 'reloading a slot map is upkeep, not a rescue');
});
