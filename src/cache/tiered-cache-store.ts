// L1 (in-process, synchronous) in front of L2 (SQLite or Redis). Reads fall through to L2 and promote;
// writes go to both, so L2 always holds the last good value until its stale window ends.
import type { CacheEntry, CacheStore } from './cache-store.js';
import type { MemoryCacheStore } from './memory-cache-store.js';

export class TieredCacheStore implements CacheStore {
  l2WriteErrors = 0;

  constructor(
    readonly l1: MemoryCacheStore,
    readonly l2: CacheStore | undefined,
  ) {}

  getSync<T>(key: string): CacheEntry<T> | undefined {
    return this.l1.getSync<T>(key);
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    const hit = this.l1.getSync<T>(key);
    if (hit !== undefined || this.l2 === undefined) return hit;
    return this.getL2<T>(key);
  }

  /** Reads L2 only (and promotes what it finds): for when L1 is known to be missing or outdated. */
  async getL2<T>(key: string): Promise<CacheEntry<T> | undefined> {
    if (this.l2 === undefined) return undefined;
    const found = await this.l2.get<T>(key);
    if (found !== undefined) await this.l1.set(key, found);
    return found;
  }

  async set<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    await this.l1.set(key, entry);
    try {
      await this.l2?.set(key, entry);
    } catch {
      // A full disk must not fail a request that has its answer: L1 still serves it.
      this.l2WriteErrors += 1;
    }
  }

  /** Entries in the in-process tier (what status and metrics report). */
  get size(): number {
    return this.l1.size;
  }

  get calculatedSize(): number {
    return this.l1.calculatedSize;
  }
}
