// The shared services every route plugin uses, built once from the validated configuration.
// Without REDIS_URL the cache's second tier and the budget ledgers live in the embedded SQLite store
// under STATE_DIR; with it, in Redis, shared by every replica (see src/store/).
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { BudgetLimits } from './budget/budget-guard.js';
import { type BudgetFactory, BudgetRegistry } from './budget/budget-registry.js';
import { EmbeddedBudgetGuard } from './budget/embedded-budget-guard.js';
import { MemoryBudgetGuard } from './budget/memory-budget-guard.js';
import { RedisBudgetGuard } from './budget/redis-budget-guard.js';
import { MAX_PACING_WAIT_MS } from './budget/budget-guard.js';
import type { CacheStore } from './cache/cache-store.js';
import { RedisFlightLock } from './cache/flight-lock.js';
import { MemoryCacheStore } from './cache/memory-cache-store.js';
import { RedisCacheStore } from './cache/redis-cache-store.js';
import { SqliteCacheStore } from './cache/sqlite-cache-store.js';
import { UpstreamCache } from './cache/upstream-cache.js';
import { StateStore } from './store/state-store.js';
import { SourceTally } from './quotes/data-source.js';
import type { QuoteService } from './quotes/quote-service.js';
import { StateScopes } from './store/upstream-identity.js';
import { UpstreamHealth } from './upstreams/upstream-health.js';

export interface AppDeps {
  config: Config;
  logger: Logger;
  health: UpstreamHealth;
  cache: UpstreamCache;
  budgets: BudgetRegistry;
  /** Embedded or Redis state; `status()` says which and whether Redis is reachable. */
  store: StateStore;
  /** Key prefixes by upstream: every stored key starts with the scope of the upstream it came from. */
  scopes: StateScopes;
  /** Answers per endpoint and data source (X-Data-Source), for status and metrics. */
  sources: SourceTally;
  /** Quotes with their fallback; set by the provider-A routes, used by every path that serves a quote. */
  quotes?: QuoteService;
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  /** Replica heartbeat period (Redis mode); tests shorten it. */
  heartbeatMs?: number;
}

export async function createDeps(config: Config, logger: Logger, options: CreateDepsOptions = {}): Promise<AppDeps> {
  // While a broker's circuit is open its callers hear "broker unavailable", as they would from the broker.
  const health = new UpstreamHealth({ openCode: (upstream) => (upstream === config.broker.kind ? 'BROKER_UNAVAILABLE' : 'UPSTREAM_ERROR') });
  const store = await StateStore.open({
    stateDir: config.stateDir,
    redisUrl: config.redis.url,
    redisKeyPrefix: config.redis.keyPrefix,
    logger,
    heartbeatMs: options.heartbeatMs,
  });
  const memory = new MemoryCacheStore({ maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes });
  let l2: CacheStore | undefined;
  let closeL2 = (): void => {};
  if (store.redis !== undefined) {
    l2 = new RedisCacheStore(store.redis);
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
    lock: store.redis === undefined ? undefined : new RedisFlightLock(store.redis),
    lockTtlMs,
    lockWaitMs: lockTtlMs,
  });
  const scopes = StateScopes.fromConfig(config);
  const budgets = new BudgetRegistry(budgetFactory(store, scopes));
  return {
    config,
    logger,
    health,
    cache,
    budgets,
    store,
    scopes,
    sources: new SourceTally(),
    close: async () => {
      closeL2();
      await store.close();
    },
  };
}

/** Ledgers are stored under the upstream's scope; the guard keeps its plain name for status and messages. */
function budgetFactory(store: StateStore, scopes: StateScopes): BudgetFactory {
  return (name: string, limits: BudgetLimits) => {
    // An uncapped upstream has nothing to count or share: the in-process guard only keeps back-offs.
    if (limits.perMinute === 0 && limits.perDay === 0 && limits.minIntervalMs === 0) return new MemoryBudgetGuard(name, limits);
    // Calls recorded under the bare name before ledgers were scoped still count in live mode.
    const legacy = scopes.mode === 'live' ? name : undefined;
    if (store.redis !== undefined && store.heartbeat !== undefined) {
      return new RedisBudgetGuard(name, limits, store.redis, store.heartbeat, MAX_PACING_WAIT_MS, scopes.of(name), legacy);
    }
    if (store.db !== undefined) return new EmbeddedBudgetGuard(name, limits, store.db, MAX_PACING_WAIT_MS, Date.now, scopes.of(name), legacy);
    return new MemoryBudgetGuard(name, limits);
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    hotPath: import('./plugins/hot-path.js').HotPath;
  }
}
