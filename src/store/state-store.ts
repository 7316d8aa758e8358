// Where cache entries, budget ledgers, single-flight locks and rate-limit counters live: the embedded
// SQLite file (one host) or Redis (shared by replicas). `status()` feeds /api/system/status.
import type { Logger } from 'pino';
import { ConfigError, type RedisTarget } from '../core/config.js';
import { DegradedMode, type SharedStore } from './degraded-mode.js';
import type { ReplicaHeartbeat } from './replica-heartbeat.js';
import { RedisConnection, type RedisKind, type RedisState } from './redis-connection.js';
import { openStateDatabase, type StateDatabase } from './state-database.js';

export interface StoreStatusReport {
  kind: 'embedded' | RedisKind;
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
  /** The primary in use (host:port; on a Cluster, every primary), null without Redis or before the first. */
  primary: string | null;
  /** Primaries replaced since start (a failover, or a node back empty); null without Redis. */
  failovers: number | null;
  /** After a failover, budgets and pacing stay local until every replica has written back. */
  settling: boolean;
  /** The primary the Sentinels (or the Cluster) named at the service's last check; null for one node, without Redis, or before. */
  namedPrimary: string | null;
  /** Times the service replaced a Redis client that did not follow the deployment by itself; null without Redis. */
  rescues: number | null;
  lastRescue: { at: string; reason: string } | null;
  message: string | null;
}

/** How shared state is decided now: alone (embedded), in Redis, locally while Redis is lost, or locally after a failover. */
export type StoreMode = 'embedded' | 'shared' | 'local_fallback' | 'settling';

export interface StateStoreOptions {
  stateDir: string;
  redis: RedisTarget | undefined;
  redisKeyPrefix: string;
  logger: Logger;
  heartbeatMs?: number;
  /** How often the service checks its Redis clients against the primary the deployment names (primary-watch.ts). */
  redisCheckMs?: number;
  /** How long the start waits for Redis before going on with local state. */
  connectWaitMs?: number;
}

export class StateStore {
  readonly kind: 'embedded' | RedisKind;
  readonly db: StateDatabase | undefined;
  readonly redis: RedisConnection | undefined;
  readonly heartbeat: ReplicaHeartbeat | undefined;
  /** What shared state does while Redis is lost and when it returns (degraded-mode.ts). */
  readonly degraded: DegradedMode | undefined;
  private readonly openedAt = new Date();

  private constructor(options: StateStoreOptions) {
    if (options.redis === undefined) {
      this.kind = 'embedded';
      this.db = openStateDatabase(options.stateDir);
    } else {
      this.kind = options.redis.kind;
      this.redis = new RedisConnection({
        target: options.redis,
        keyPrefix: options.redisKeyPrefix,
        logger: options.logger,
        checkMs: options.redisCheckMs,
      });
      this.degraded = new DegradedMode(this.redis, options.heartbeatMs);
      this.heartbeat = this.degraded.heartbeat;
      this.redis.on('state:ready', () => void this.heartbeat?.beat());
    }
  }

  /** The connection, heartbeat and degraded-mode policy that shared concepts take; undefined without Redis. */
  get shared(): SharedStore | undefined {
    const { redis, heartbeat, degraded } = this;
    return redis === undefined || heartbeat === undefined || degraded === undefined ? undefined : { redis, heartbeat, degraded };
  }

  static async open(options: StateStoreOptions): Promise<StateStore> {
    const store = new StateStore(options);
    if (store.redis !== undefined && options.redis !== undefined) {
      const ready = await store.redis.waitReady(options.connectWaitMs ?? 2_000);
      const refused = ready ? undefined : refusal(store.redis.lastError, options.redis);
      if (refused !== undefined) {
        await store.close();
        throw new ConfigError([refused]);
      }
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
        primary: null,
        failovers: null,
        settling: false,
        namedPrimary: null,
        rescues: null,
        lastRescue: null,
        message: null,
      };
    }
    const fallback = !redis.ready;
    const settling = this.degraded?.settling ?? false;
    const rescue = redis.lastRescue;
    return {
      kind: this.kind,
      redis: redis.state,
      redisReachable: redis.ready,
      fallback,
      lastError: redis.lastError,
      since: redis.since.toISOString(),
      replicas: this.heartbeat?.replicas ?? null,
      primary: redis.primary,
      failovers: redis.failovers,
      settling,
      namedPrimary: redis.namedPrimary,
      rescues: redis.rescues,
      lastRescue: rescue === null ? null : { at: rescue.at.toISOString(), reason: rescue.reason },
      message: fallback
        ? `redis ${redis.state} since ${redis.since.toISOString()}${redis.lastError ? ` (${redis.lastError})` : ''}; serving from local state, provider budgets split across replicas`
        : settling
          ? `a new redis primary since ${redis.lastFailoverAt?.toISOString()}: provider budgets stay split across replicas until every replica has written back its calls`
          : null,
    };
  }

  /** The mode, and since when it holds (metrics, and the alerts on a fallback or an unsettled failover). */
  mode(): { mode: StoreMode; since: Date } {
    const { redis, degraded } = this;
    if (redis === undefined || degraded === undefined) return { mode: 'embedded', since: this.openedAt };
    if (!redis.ready) return { mode: 'local_fallback', since: redis.since };
    const changed = degraded.settlingChangedAt;
    if (degraded.settling && changed !== undefined) return { mode: 'settling', since: changed };
    return { mode: 'shared', since: changed !== undefined && changed > redis.since ? changed : redis.since };
  }

  async close(): Promise<void> {
    await this.heartbeat?.stop();
    await this.redis?.close();
    this.db?.close();
  }
}

/**
 * A start that Redis refuses for the configuration itself (credentials, a certificate not trusted) is an
 * error to fix, not an outage to ride out on local state: it would never heal by itself.
 */
function refusal(error: string | null, target: RedisTarget): string | undefined {
  if (error === null) return undefined;
  const where = target.kind === 'redis' ? 'REDIS_URL' : 'REDIS_USERNAME / REDIS_PASSWORD';
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(error)) {
    return `Redis refused the credentials (${error.split(' ')[0]}): check the user and password in ${where}`;
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(error)) {
    return `Redis's TLS certificate is not trusted (${error}): give Node.js its CA (NODE_EXTRA_CA_CERTS) or check the host name in ${where === 'REDIS_URL' ? where : 'REDIS_CLUSTER_NODES / REDIS_SENTINELS'}`;
  }
  return undefined;
}
