// Where cache entries, budget ledgers, single-flight locks and rate-limit counters live: the embedded
// SQLite file (one host) or Redis (shared by replicas). `status()` feeds /api/system/status.
import type { Logger } from 'pino';
import { ReplicaHeartbeat } from './replica-heartbeat.js';
import { RedisConnection, type RedisState } from './redis-connection.js';
import { openStateDatabase, type StateDatabase } from './state-database.js';

export interface StoreStatusReport {
  kind: 'embedded' | 'redis';
  /** null without Redis. */
  redis: RedisState | null;
  redisReachable: boolean | null;
  /** Redis is configured but lost: local state is used. */
  fallback: boolean;
  lastError: string | null;
  /** When the Redis link last changed state (or when the store opened). */
  since: string;
  /** Live replicas seen through the Redis heartbeat. */
  replicas: number | null;
  message: string | null;
}

export interface StateStoreOptions {
  stateDir: string;
  redisUrl: string | undefined;
  redisKeyPrefix: string;
  logger: Logger;
  heartbeatMs?: number;
  /** How long the start waits for Redis before going on with local state. */
  connectWaitMs?: number;
}

export class StateStore {
  readonly kind: 'embedded' | 'redis';
  readonly db: StateDatabase | undefined;
  readonly redis: RedisConnection | undefined;
  readonly heartbeat: ReplicaHeartbeat | undefined;
  private readonly openedAt = new Date();

  private constructor(options: StateStoreOptions) {
    if (options.redisUrl === undefined) {
      this.kind = 'embedded';
      this.db = openStateDatabase(options.stateDir);
    } else {
      this.kind = 'redis';
      this.redis = new RedisConnection({ url: options.redisUrl, keyPrefix: options.redisKeyPrefix, logger: options.logger });
      this.heartbeat = new ReplicaHeartbeat(this.redis, options.heartbeatMs);
      this.redis.on('state:ready', () => void this.heartbeat?.beat());
    }
  }

  static async open(options: StateStoreOptions): Promise<StateStore> {
    const store = new StateStore(options);
    if (store.redis !== undefined) {
      const ready = await store.redis.waitReady(options.connectWaitMs ?? 2_000);
      if (!ready) options.logger.warn('redis is not reachable at start; serving from local state until it is');
      store.heartbeat?.start();
      if (ready) await store.heartbeat?.beat();
    }
    return store;
  }

  status(): StoreStatusReport {
    const redis = this.redis;
    if (redis === undefined) {
      return {
        kind: 'embedded',
        redis: null,
        redisReachable: null,
        fallback: false,
        lastError: null,
        since: this.openedAt.toISOString(),
        replicas: null,
        message: null,
      };
    }
    const fallback = !redis.ready;
    return {
      kind: 'redis',
      redis: redis.state,
      redisReachable: redis.ready,
      fallback,
      lastError: redis.lastError,
      since: redis.since.toISOString(),
      replicas: this.heartbeat?.replicas ?? null,
      message: fallback
        ? `redis ${redis.state} since ${redis.since.toISOString()}${redis.lastError ? ` (${redis.lastError})` : ''}; serving from local state, provider budgets split across replicas`
        : null,
    };
  }

  async close(): Promise<void> {
    await this.heartbeat?.stop();
    await this.redis?.close();
    this.db?.close();
  }
}
