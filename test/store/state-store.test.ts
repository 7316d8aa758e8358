import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { StateStore } from '../../src/store/state-store.js';
import { tempDir } from '../helpers/config.js';
import { REDIS_URL, redisPrefix } from './redis-helper.js';

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
