// The in-process tier: bounded in entries and in bytes, entries dropped once their stale window ends.
import { LRUCache } from 'lru-cache';
import type { CacheEntry, CacheStore } from './cache-store.js';

export interface MemoryCacheStoreOptions {
  maxEntries: number;
  maxBytes: number;
}

export class MemoryCacheStore implements CacheStore {
  private readonly lru: LRUCache<string, CacheEntry>;

  constructor(options: MemoryCacheStoreOptions) {
    this.lru = new LRUCache<string, CacheEntry>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      // Serialised length is a fair proxy for heap cost and is computed once per set.
      sizeCalculation: (entry, key) => key.length + JSON.stringify(entry.value).length + 64,
    });
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    return this.getSync<T>(key);
  }

  /** Synchronous read for the hot path: a hit costs no promise. */
  getSync<T>(key: string): CacheEntry<T> | undefined {
    return this.lru.get(key) as CacheEntry<T> | undefined;
  }

  async set<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    const ttl = entry.staleUntil - Date.now();
    if (ttl <= 0) return;
    this.lru.set(key, entry as CacheEntry, { ttl });
  }

  get size(): number {
    return this.lru.size;
  }

  get calculatedSize(): number {
    return this.lru.calculatedSize;
  }
}
