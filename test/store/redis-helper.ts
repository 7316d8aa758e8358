// Tests use the Redis at TEST_REDIS_URL (default redis://127.0.0.1:6379) under a random key prefix, and
// delete their keys after.
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { RedisTarget } from '../../src/core/config.js';
import { DegradedMode, type SharedStore } from '../../src/store/degraded-mode.js';
import { RedisConnection } from '../../src/store/redis-connection.js';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function redisPrefix(t: TestContext): string {
  const prefix = `mdp-test:${randomBytes(6).toString('hex')}:`;
  t.after(() => deleteKeys(prefix));
  return prefix;
}

export async function deleteKeys(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** A connection under `prefix` (its primary watch every `checkMs`), closed when the test ends. */
export async function connectRedis(
  t: TestContext,
  prefix: string,
  url: string | RedisTarget = REDIS_URL,
  checkMs?: number,
): Promise<RedisConnection> {
  const target: RedisTarget = typeof url === 'string' ? { kind: 'redis', url } : url;
  const connection = new RedisConnection({ target, keyPrefix: prefix, logger: pino({ level: 'silent' }), checkMs });
  t.after(() => connection.close());
  await connection.waitReady(2_000);
  return connection;
}

/** A replica's view of the shared store: connection, heartbeat (every `beatMs`, started) and degraded-mode policy. */
export async function sharedStore(
  t: TestContext,
  prefix: string,
  url: string | RedisTarget = REDIS_URL,
  beatMs = 100,
  checkMs?: number,
): Promise<SharedStore> {
  const redis = await connectRedis(t, prefix, url, checkMs);
  const degraded = new DegradedMode(redis, beatMs);
  const { heartbeat } = degraded;
  heartbeat.start();
  t.after(() => heartbeat.stop());
  await heartbeat.beat();
  return { redis, heartbeat, degraded };
}
