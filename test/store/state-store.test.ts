import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { StateStore } from '../../src/store/state-store.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';
import { RedisStandalone } from './redis-topology.js';

const logger = pino({ level: 'silent' });

test('without Redis the store is embedded SQLite (WAL) under STATE_DIR', async (t) => {
  const dir = tempDir(t);
  const store = await StateStore.open({ stateDir: dir, redis: undefined, redisKeyPrefix: 'x:', logger });
  t.after(() => store.close());
  assert.equal(store.status().kind, 'embedded');
  assert.equal(store.status().redisReachable, null);
  assert.equal(store.db?.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
  assert.equal(store.db?.prepare('PRAGMA synchronous').get()?.synchronous, 2, 'FULL');
});

test('an unusable STATE_DIR stops the start with a clear message', async (t) => {
  const file = join(tempDir(t), 'not-a-directory');
  writeFileSync(file, '');
  await assert.rejects(
    StateStore.open({ stateDir: file, redis: undefined, redisKeyPrefix: 'x:', logger }),
    /cannot open the embedded store .*STATE_DIR/,
  );
});

test('with Redis the status says ready, and says down (without the address) when it cannot connect', async (t) => {
  const ok = await StateStore.open({
    stateDir: tempDir(t),
    redis: { kind: 'redis', url: REDIS_URL },
    redisKeyPrefix: redisPrefix(t),
    logger,
  });
  t.after(() => ok.close());
  assert.equal(ok.status().kind, 'redis');
  assert.equal(ok.status().redis, 'ready');
  assert.equal(ok.status().fallback, false);
  assert.equal(ok.status().replicas, 1);

  const lost = await StateStore.open({
    stateDir: tempDir(t),
    redis: { kind: 'redis', url: 'redis://127.0.0.1:1' },
    redisKeyPrefix: redisPrefix(t),
    logger,
    connectWaitMs: 300,
  });
  t.after(() => lost.close());
  const status = lost.status();
  assert.equal(status.redisReachable, false);
  assert.equal(status.fallback, true);
  assert.doesNotMatch(JSON.stringify(status), /127\.0\.0\.1|redis:\/\//);
});

test('the mode and since when: shared, local_fallback from the moment Redis is lost, settling from the failover, shared once settled', async (t) => {
  const redis = await RedisStandalone.start();
  t.after(() => redis.stop());
  const store = await StateStore.open({
    stateDir: tempDir(t),
    redis: { kind: 'redis', url: redis.url },
    redisKeyPrefix: redisPrefix(t),
    logger,
    heartbeatMs: 100,
  });
  t.after(() => store.close());
  const opened = store.mode();
  assert.equal(opened.mode, 'shared');

  // Restarted empty: a new run id, which the replica takes as a failover once it reconnects.
  const down = once(store.redis!, 'state:down');
  // The failover is seen as the link comes back (the mode reads settling once it is ready again).
  const settling = once(store.degraded!, 'settling').then(async () => {
    if (!store.redis!.ready) await once(store.redis!, 'state:ready');
    return store.mode();
  });
  const killedAt = Date.now();
  await redis.kill(redis.node);
  await down;
  const lost = store.mode();
  assert.equal(lost.mode, 'local_fallback');
  assert.ok(lost.since.getTime() >= killedAt && lost.since > opened.since, 'since the link was lost');
  await redis.restart(redis.node);
  const failedOver = await settling;
  assert.equal(failedOver.mode, 'settling');
  assert.ok(failedOver.since >= lost.since, 'since the failover was seen');
  await once(store.degraded!, 'shared');
  const shared = store.mode();
  assert.equal(shared.mode, 'shared');
  assert.ok(shared.since > failedOver.since, 'since it settled');
});
