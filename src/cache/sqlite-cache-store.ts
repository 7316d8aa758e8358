// Second tier without Redis: last good values in the embedded SQLite file, kept until their stale
// window ends, so a restart (or a crash) still has something honest to serve. Bounded in rows and bytes
// by a periodic sweep that drops expired entries first, then those closest to expiry.
import type { StatementSync } from 'node:sqlite';
import type { CacheEntry, CacheStore } from './cache-store.js';
import type { StateDatabase } from '../store/state-database.js';

interface Row {
  value: string;
  stored_at: number;
  fresh_until: number;
  stale_until: number;
}

export interface SqliteCacheStoreOptions {
  maxEntries: number;
  maxBytes: number;
  sweepIntervalMs?: number;
}

export class SqliteCacheStore implements CacheStore {
  private readonly read: StatementSync;
  private readonly write: StatementSync;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: StateDatabase,
    private readonly options: SqliteCacheStoreOptions,
  ) {
    this.read = db.prepare('SELECT value, stored_at, fresh_until, stale_until FROM cache_entries WHERE key = ? AND stale_until > ?');
    this.write = db.prepare(
      'INSERT OR REPLACE INTO cache_entries (key, value, stored_at, fresh_until, stale_until) VALUES (?, ?, ?, ?, ?)',
    );
    this.sweep();
    this.timer = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.timer.unref();
  }

  async get<T>(key: string): Promise<CacheEntry<T> | undefined> {
    return this.getSync<T>(key);
  }

  getSync<T>(key: string): CacheEntry<T> | undefined {
    const row = this.read.get(key, Date.now()) as Row | undefined;
    if (row === undefined) return undefined;
    return { value: JSON.parse(row.value) as T, storedAt: row.stored_at, freshUntil: row.fresh_until, staleUntil: row.stale_until };
  }

  async set<T>(key: string, entry: CacheEntry<T>): Promise<void> {
    if (entry.staleUntil <= Date.now()) return;
    this.write.run(key, JSON.stringify(entry.value), entry.storedAt, entry.freshUntil, entry.staleUntil);
  }

  /** Drops expired rows, then the soonest-to-expire ones while over the entry or byte bound. */
  sweep(now = Date.now()): void {
    this.db.prepare('DELETE FROM cache_entries WHERE stale_until <= ?').run(now);
    const { rows, bytes } = this.db
      .prepare('SELECT COUNT(*) AS rows, COALESCE(SUM(LENGTH(value) + LENGTH(key)), 0) AS bytes FROM cache_entries')
      .get() as unknown as { rows: number; bytes: number };
    if (rows <= this.options.maxEntries && bytes <= this.options.maxBytes) return;
    const excessRows = Math.max(0, rows - this.options.maxEntries);
    const share = bytes > this.options.maxBytes ? Math.ceil(rows * (1 - this.options.maxBytes / bytes)) : 0;
    const drop = Math.max(excessRows, share, 1);
    this.db.prepare('DELETE FROM cache_entries WHERE key IN (SELECT key FROM cache_entries ORDER BY stale_until ASC LIMIT ?)').run(drop);
  }

  get size(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM cache_entries').get() as unknown as { n: number }).n;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
