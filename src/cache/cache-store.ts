// A cache entry carries its own fresh and stale deadlines, so every store and replica agrees on them.
import type { CacheWindow } from '../core/config.js';

export type { CacheWindow };

export interface CacheEntry<T = unknown> {
  value: T;
  /** When the upstream answered (ms since epoch); `Age` is counted from here. */
  storedAt: number;
  freshUntil: number;
  staleUntil: number;
}

export type CacheStatus = 'HIT' | 'MISS' | 'STALE';

export interface CacheResult<T> {
  entry: CacheEntry<T>;
  status: CacheStatus;
}

export interface CacheStore {
  get<T>(key: string): Promise<CacheEntry<T> | undefined>;
  set<T>(key: string, entry: CacheEntry<T>): Promise<void>;
}

export function isFresh(entry: CacheEntry, now: number): boolean {
  return now < entry.freshUntil;
}

export function isServable(entry: CacheEntry, now: number): boolean {
  return now < entry.staleUntil;
}

export function makeEntry<T>(value: T, window: CacheWindow, now = Date.now()): CacheEntry<T> {
  return { value, storedAt: now, freshUntil: now + window.freshMs, staleUntil: now + window.freshMs + window.staleMs };
}
