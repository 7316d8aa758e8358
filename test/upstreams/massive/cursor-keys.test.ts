import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import pino from 'pino';
import { DegradedMode } from '../../../src/store/degraded-mode.js';
import { CURSOR_SECRET_KEY, cursorKeys } from '../../../src/upstreams/massive/cursor-keys.js';
import { redisPrefix, sharedStore } from '../../store/redis-helper.js';
import { startProxy } from '../../store/tcp-proxy.js';

const logger = pino({ level: 'silent' });

test('CURSOR_SECRET wins; without it the first replica’s random key is shared through Redis', async (t) => {
  assert.deepEqual(await cursorKeys('s'.repeat(32), undefined, logger), [Buffer.from('s'.repeat(32))]);
  const prefix = redisPrefix(t);
  const [a, b] = await Promise.all([sharedStore(t, prefix), sharedStore(t, prefix)]);
  const [keysA, keysB] = await Promise.all([cursorKeys(undefined, a, logger), cursorKeys(undefined, b, logger)]);
  assert.equal(keysA.length, 1);
  assert.equal(keysA[0]!.length, 32);
  assert.deepEqual(keysA, keysB, 'SET NX: one key for every replica');
  assert.equal(await a.redis.client.get(a.redis.key(CURSOR_SECRET_KEY)), keysA[0]!.toString('base64'));
});

test('Redis lost (the degraded-mode policy says so): a key of its own, then the shared one first on its return', async (t) => {
  const prefix = redisPrefix(t);
  const shared = (await cursorKeys(undefined, await sharedStore(t, prefix), logger))[0]!;
  const proxy = await startProxy(t);
  const store = await sharedStore(t, prefix, proxy.url);
  const { redis } = store;
  await proxy.cut();
  if (redis.ready) await once(redis, 'state:down');
  assert.equal(store.degraded.shares('cursor-key'), false, 'the policy says Redis is lost');
  const keys = await cursorKeys(undefined, store, logger);
  assert.equal(keys.length, 1);
  const own = keys[0]!;
  assert.ok(!own.equals(shared));
  await proxy.open();
  await once(redis, 'state:ready');
  while (keys.length < 2) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(keys, [shared, own], 'signs with the shared key, still verifies what it minted alone');
});

test('the degraded-mode policy decides, not the connection: Redis answering but the policy saying lost, a key of its own', async (t) => {
  const prefix = redisPrefix(t);
  const store = await sharedStore(t, prefix);
  class Lost extends DegradedMode {
    override shares(): boolean {
      return false;
    }
  }
  assert.equal(store.redis.ready, true);
  const keys = await cursorKeys(undefined, { ...store, degraded: new Lost(store.redis) }, logger);
  assert.equal(keys.length, 1);
  assert.equal(await store.redis.client.get(store.redis.key(CURSOR_SECRET_KEY)), null, 'no key shared');
});
