// Second tier with Redis: entries shared by every replica, expiring with their stale window. While the
// degraded-mode policy says Redis is away (or a command fails) a read is a miss and a write is skipped,
// never an error: the in-process tier keeps serving.
import type { CacheEntry, CacheStore } from './cache-store.js';
import type { SharedStore } from '../store/degraded-mode.js';

interface Stored {
  v: unknown;
  s: number;
  f: number;
  u: number;
}

export class RedisCacheStore implements CacheStore {
  constructor(private readonly shared: SharedStore) {}

  private key(key: string): string {
    return this.shared.redis.key(`cache:${key}`);
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const stored = await this.shared.degraded.attempt(
      'cache',
      async (client) => {
        const text = await client.get(this.key(key));
        return text === null ? undefined : (JSON.parse(text) as Stored);
      },
      () => undefined,
    );
    if (stored === undefined || stored.u <= Date.now()) return undefined;
    return { value: stored.v as T, storedAt: stored.s, freshUntil: stored.f, staleUntil: stored.u };
  }

  async set<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    const ttl = entry.staleUntil - Date.now();
    if (ttl <= 0) return;
    const stored: Stored = { v: entry.value, s: entry.storedAt, f: entry.freshUntil, u: entry.staleUntil };
    await this.shared.degraded.attempt(
      'cache',
      (client) => client.set(this.key(key), JSON.stringify(stored), 'PX', Math.ceil(ttl)),
      () => null,
    );
  }
}
