import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import pino from 'pino';
import { CURSOR_SECRET_KEY, cursorKeys } from '../../../src/upstreams/massive/cursor-keys.js';
import { connectRedis, redisPrefix } from '../../store/redis-helper.js';
import { startProxy } from '../../store/tcp-proxy.js';

const logger = pino({ level: 'silent' });

test('CURSOR_SECRET wins; without it the first replica’s random key is shared through Redis', async (t) => {
  assert.deepEqual(await cursorKeys('s'.repeat(32), undefined, logger), [Buffer.from('s'.repeat(32))]);
  const prefix = redisPrefix(t);
  const [a, b] = await Promise.all([connectRedis(t, prefix), connectRedis(t, prefix)]);
  const [keysA, keysB] = await Promise.all([cursorKeys(undefined, a, logger), cursorKeys(undefined, b, logger)]);
  assert.equal(keysA.length, 1);
  assert.equal(keysA[0]!.length, 32);
  assert.deepEqual(keysA, keysB, 'SET NX: one key for every replica');
  assert.equal(await a.client.get(a.key(CURSOR_SECRET_KEY)), keysA[0]!.toString('base64'));
});

test('Redis away at start: a key of its own, then the shared one first once Redis answers', async (t) => {
  const prefix = redisPrefix(t);
  const shared = (await cursorKeys(undefined, await connectRedis(t, prefix), logger))[0]!;
  const proxy = await startProxy(t);
  const redis = await connectRedis(t, prefix, proxy.url);
  await proxy.cut();
  if (redis.ready) await once(redis, 'state:down');
  const keys = await cursorKeys(undefined, redis, logger);
  assert.equal(keys.length, 1);
  const own = keys[0]!;
  assert.ok(!own.equals(shared));
  await proxy.open();
  await once(redis, 'state:ready');
  while (keys.length < 2) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(keys, [shared, own], 'signs with the shared key, still verifies what it minted alone');
});
