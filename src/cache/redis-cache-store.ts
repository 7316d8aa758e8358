// Second tier with Redis: entries shared by every replica, expiring with their stale window. A Redis
// failure reads as a miss and a skipped write, never as an error: the in-process tier keeps serving.
import type { CacheEntry, CacheStore } from './cache-store.js';
import type { RedisConnection } from '../store/redis-connection.js';

interface Stored {
  v: unknown;
  s: number;
  f: number;
  u: number;
}

export class RedisCacheStore implements CacheStore {
  constructor(private readonly redis: RedisConnection) {}

  private key(key: string): string {
    return this.redis.key(`cache:${key}`);
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    if (!this.redis.ready) return undefined;
    try {
      const text = await this.redis.client.get(this.key(key));
      if (text === null) return undefined;
      const stored = JSON.parse(text) as Stored;
      const entry: CacheEntry<T> = { value: stored.v as T, storedAt: stored.s, freshUntil: stored.f, staleUntil: stored.u };
      return entry.staleUntil > Date.now() ? entry : undefined;
    } catch (error) {
      this.redis.noteFailure(error);
      return undefined;
    }
  }

  async set<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    const ttl = entry.staleUntil - Date.now();
    if (ttl <= 0 || !this.redis.ready) return;
    const stored: Stored = { v: entry.value, s: entry.storedAt, f: entry.freshUntil, u: entry.staleUntil };
    try {
      await this.redis.client.set(this.key(key), JSON.stringify(stored), 'PX', Math.ceil(ttl));
    } catch (error) {
      this.redis.noteFailure(error);
    }
  }
}
