// Where the cache's second tier and the budget ledgers live: in Redis, shared by every replica, when
// REDIS_URL is set; else in the embedded SQLite store under STATE_DIR; in process when neither is open.
import type { Logger } from 'pino';
import { type BudgetLimits, MAX_PACING_WAIT_MS } from '../budget/budget-guard.js';
import type { BudgetFactory } from '../budget/budget-registry.js';
import { EmbeddedBudgetGuard } from '../budget/embedded-budget-guard.js';
import { MemoryBudgetGuard } from '../budget/memory-budget-guard.js';
import { RedisBudgetGuard } from '../budget/redis-budget-guard.js';
import type { CacheStore } from '../cache/cache-store.js';
import { RedisFlightLock } from '../cache/flight-lock.js';
import { MemoryCacheStore } from '../cache/memory-cache-store.js';
import { RedisCacheStore } from '../cache/redis-cache-store.js';
import { SqliteCacheStore } from '../cache/sqlite-cache-store.js';
import { UpstreamCache } from '../cache/upstream-cache.js';
import type { Config } from '../core/config.js';
import type { UpstreamHealth } from '../health/upstream-health.js';
import type { StateStore } from '../store/state-store.js';
import type { StateScopes } from '../store/upstream-identity.js';

export function createCache(
  config: Config,
  logger: Logger,
  health: UpstreamHealth,
  store: StateStore,
): { cache: UpstreamCache; closeL2: () => void } {
  const memory = new MemoryCacheStore({ maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes });
  let l2: CacheStore | undefined;
  let closeL2 = (): void => {};
  if (store.shared !== undefined) {
    l2 = new RedisCacheStore(store.shared);
  } else if (store.db !== undefined) {
    const sqlite = new SqliteCacheStore(store.db, { maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes });
    l2 = sqlite;
    closeL2 = () => sqlite.close();
  }
  // A lock outlives one upstream call including its pacing wait, so a live holder never loses it.
  const lockTtlMs = config.upstreamTimeoutMs + MAX_PACING_WAIT_MS + 2_000;
  const cache = new UpstreamCache({
    memory,
    logger,
    health,
    l2,
    lock: store.shared === undefined ? undefined : new RedisFlightLock(store.shared),
    lockTtlMs,
    lockWaitMs: lockTtlMs,
    notFoundMs: config.cache.notFoundMs,
  });
  return { cache, closeL2 };
}

/** Ledgers are stored under the upstream's scope; the guard keeps its plain name for status and messages. */
export function budgetFactory(store: StateStore, scopes: StateScopes): BudgetFactory {
  return (name: string, limits: BudgetLimits) => {
    // An uncapped upstream has nothing to count or share: the in-process guard only keeps back-offs.
    if (limits.perMinute === 0 && limits.perDay === 0 && limits.minIntervalMs === 0) return new MemoryBudgetGuard(name, limits);
    const shared = store.shared;
    if (shared !== undefined) return new RedisBudgetGuard(name, limits, shared, MAX_PACING_WAIT_MS, scopes.of(name));
    if (store.db !== undefined) return new EmbeddedBudgetGuard(name, limits, store.db, MAX_PACING_WAIT_MS, Date.now, scopes.of(name));
    return new MemoryBudgetGuard(name, limits);
  };
}
