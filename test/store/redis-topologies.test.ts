// Shared state on the topologies users run: a Cluster of three primaries, a node restarted empty, and a
// primary with a replica behind three Sentinels, each started here from redis-server.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { SharedRequestPacer } from '../../src/broker/shared-request-pacer.js';
import type { BudgetLimits } from '../../src/budget/budget-guard.js';
import { RedisBudgetGuard } from '../../src/budget/redis-budget-guard.js';
import { RedisCacheStore } from '../../src/cache/redis-cache-store.js';
import { RedisFlightLock } from '../../src/cache/flight-lock.js';
import type { RedisTarget } from '../../src/core/config.js';
import { BudgetExhaustedError } from '../../src/core/errors.js';
import type { SharedStore } from '../../src/store/degraded-mode.js';
import { StateStore } from '../../src/store/state-store.js';
import type { LiveTopics } from '../../src/stream/live-topics.js';
import { TopicRelay } from '../../src/stream/topic-relay.js';
import { tempDir } from '../helpers/config.js';
import { sharedStore } from './redis-helper.js';
import { RedisCluster, RedisSentinelGroup, RedisStandalone, until } from './redis-topology.js';

const LIMITS: BudgetLimits = { perMinute: 5, perDay: 500, minIntervalMs: 0 };
const logger = pino({ level: 'silent' });

async function spend(guard: RedisBudgetGuard, times: number): Promise<number> {
  const outcomes = await Promise.all(
    Array.from({ length: times }, () =>
      guard.acquire().then(
        () => true,
        (error: unknown) => {
          assert.ok(error instanceof BudgetExhaustedError, String(error));
          return false;
        },
      ),
    ),
  );
  return outcomes.filter(Boolean).length;
}

/** Resolves when the replica trusts the shared ledgers again after a failover. */
async function settled(store: SharedStore): Promise<void> {
  if (store.degraded.settling || !store.redis.ready) await once(store.degraded, 'shared');
}

describe('a Cluster of three primaries', () => {
  let cluster: RedisCluster;
  let target: RedisTarget;
  before(async () => {
    cluster = await RedisCluster.start();
    target = {
      kind: 'redis-cluster',
      nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
      username: undefined,
      password: undefined,
      tls: false,
    };
  });
  after(() => cluster.stop());

  test('budgets, pacing, locks and the cache work across three replicas, each ledger in one slot, ledgers spread', async (t) => {
    const replicas = await Promise.all([0, 1, 2].map(() => sharedStore(t, 'mdp-test:', target)));
    const ledgers = ['live:a@1', 'live:b@2', 'live:c@3', 'live:d@4', 'live:e@5', 'live:f@6'];
    for (const ledger of ledgers) {
      const guards = replicas.map((r) => new RedisBudgetGuard('alphaVantage', LIMITS, r, 100, ledger));
      const sent = (await Promise.all(guards.map((g) => spend(g, 4)))).reduce((a, b) => a + b, 0);
      assert.equal(sent, 5, `three replicas together send the per-minute budget of ${ledger}`);
      assert.equal(guards[0]?.mode, 'redis');
    }
    const pacers = replicas.map(
      (r) => new SharedRequestPacer({ name: 'the gateway', perWindow: 3, windowMs: 60_000, maxWaitMs: 0 }, r, 'ibkr'),
    );
    const paced = await Promise.all(
      pacers.flatMap((p) =>
        [p.acquire(), p.acquire()].map((a) =>
          a.then(
            () => true,
            () => false,
          ),
        ),
      ),
    );
    assert.equal(paced.filter(Boolean).length, 3, 'one pacing window for all three');
    assert.equal(pacers[0]?.mode, 'redis');

    const locks = replicas.map((r) => new RedisFlightLock(r));
    const attempts = await Promise.all(locks.map((l) => l.tryAcquire('live:a@1:quote:IBM', 5_000)));
    assert.deepEqual(attempts.map((a) => a.kind).sort(), ['acquired', 'held', 'held']);
    const cache = replicas.map((r) => new RedisCacheStore(r));
    const entry = { value: { price: 1 }, storedAt: Date.now(), freshUntil: Date.now() + 60_000, staleUntil: Date.now() + 60_000 };
    await cache[0]?.set('live:a@1:quote:IBM', entry);
    assert.deepEqual((await cache[2]?.get('live:a@1:quote:IBM'))?.value, { price: 1 });

    const client = replicas[0]?.redis.client as Redis;
    const slotOf = async (key: string) => Number(await client.cluster('KEYSLOT', key));
    const owners = new Set<number>();
    for (const ledger of ledgers) {
      const calls = `mdp-test:{budget:${ledger}}:calls`;
      assert.equal(await slotOf(calls), await slotOf(`mdp-test:{budget:${ledger}}:backoff`), 'one slot per ledger');
      owners.add((await cluster.nodeOf(calls)).port);
    }
    assert.ok(owners.size >= 2, 'ledgers spread over the primaries');
  });

  test('a stream relay channel carries messages between replicas on different nodes', async (t) => {
    const [a, b] = await Promise.all([0, 1].map(() => sharedStore(t, 'mdp-test:', target)));
    const relay = (store: SharedStore) =>
      new TopicRelay({ shared: store, topics: {} as LiveTopics, logger, scopeOf: () => 'sandbox:yahoo' });
    const [ra, rb] = [relay(a as SharedStore), relay(b as SharedStore)];
    t.after(() => Promise.all([ra.close(), rb.close()]));
    const got: unknown[] = [];
    const heard = new Promise<void>((resolve) => {
      rb.channel('stream:sandbox:yahoo:quote:IBM', (payload) => {
        got.push(payload);
        resolve();
      });
    });
    const sender = ra.channel('stream:sandbox:yahoo:quote:IBM', () => {});
    // The subscription is made asynchronously: publish until it is heard.
    const timer = setInterval(() => sender.publish({ price: 2 }), 20);
    await heard;
    clearInterval(timer);
    assert.deepEqual(got[0], { price: 2 });
  });

  test('the status names the kind and every primary', async (t) => {
    const store = await StateStore.open({ stateDir: tempDir(t), redis: target, redisKeyPrefix: 'mdp-test:', logger, heartbeatMs: 200 });
    t.after(() => store.close());
    const status = store.status();
    assert.equal(status.kind, 'redis-cluster');
    assert.equal(status.redisReachable, true);
    assert.equal(status.primary?.split(',').length, 3);
    assert.equal(status.failovers, 0);
  });
});

test('a node restarted empty: each replica writes back the calls it sent, and the budget holds', async (t) => {
  const redis = await RedisStandalone.start();
  t.after(() => redis.stop());
  const [a, b] = await Promise.all([0, 1].map(() => sharedStore(t, 'mdp-test:', redis.url, 200)));
  const ga = new RedisBudgetGuard('alphaVantage', LIMITS, a as SharedStore, 100, 'live:av@1');
  const gb = new RedisBudgetGuard('alphaVantage', LIMITS, b as SharedStore, 100, 'live:av@1');
  assert.equal((await spend(ga, 2)) + (await spend(gb, 3)), 5);

  const seen = [once((a as SharedStore).redis, 'failover'), once((b as SharedStore).redis, 'failover')];
  await redis.restart(redis.node);
  await Promise.all(seen);
  assert.equal(ga.mode, 'local-fallback', 'no shared decision before every replica has written back');
  await Promise.all([settled(a as SharedStore), settled(b as SharedStore)]);
  const direct = new Redis(redis.url);
  t.after(() => direct.disconnect());
  assert.equal(await direct.zcard('mdp-test:{budget:live:av@1}:calls'), 5, 'the union of both replicas’ records');
  assert.equal(await spend(ga, 3), 0, 'the minute budget is still spent');
  assert.equal(ga.mode, 'redis');
  assert.equal((a as SharedStore).redis.failovers, 1);
});

describe('a primary, a replica and three Sentinels', () => {
  let group: RedisSentinelGroup;
  let target: RedisTarget;
  before(async () => {
    group = await RedisSentinelGroup.start({ password: 'primary-secret', sentinelPassword: 'sentinel-secret' });
    target = {
      kind: 'redis-sentinel',
      sentinels: group.sentinels.map((n) => ({ host: '127.0.0.1', port: n.port })),
      name: RedisSentinelGroup.NAME,
      sentinelPassword: 'sentinel-secret',
      username: undefined,
      password: 'primary-secret',
      tls: false,
    };
  });
  after(() => group.stop());

  test('a failover: both replicas follow the Sentinels to the new primary, count it, and keep the budget', async (t: TestContext) => {
    const stores = await Promise.all([0, 1].map(() => sharedStore(t, 'mdp-test:', target, 200)));
    const [a, b] = stores as [SharedStore, SharedStore];
    assert.equal(a.redis.primary, `127.0.0.1:${group.primary.port}`);
    const ga = new RedisBudgetGuard('alphaVantage', LIMITS, a, 100, 'live:av@2');
    const gb = new RedisBudgetGuard('alphaVantage', LIMITS, b, 100, 'live:av@2');
    assert.equal((await spend(ga, 3)) + (await spend(gb, 3)), 5);

    const seen = [once(a.redis, 'failover'), once(b.redis, 'failover')];
    const sentinel = new Redis({ port: group.sentinels[0]?.port, password: 'sentinel-secret' });
    t.after(() => sentinel.disconnect());
    await sentinel.call('SENTINEL', 'FAILOVER', RedisSentinelGroup.NAME);
    await Promise.all(seen);
    await until('the replicas to reach the new primary', async () => a.redis.primary === `127.0.0.1:${group.replica.port}`);
    await Promise.all([settled(a), settled(b)]);
    assert.equal(await spend(gb, 2), 0, 'the budget spent before the failover still counts');
    assert.equal(a.redis.failovers, 1);
  });
});
