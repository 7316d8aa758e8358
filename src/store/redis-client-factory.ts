// The ioredis clients the service opens, one recipe per topology: a single node (REDIS_URL), a Cluster
// (REDIS_CLUSTER_NODES) or a primary found through Sentinel (REDIS_SENTINELS). Commands fail fast while
// Redis is away (no offline queue, one retry, a deadline), so a lost Redis costs a request microseconds,
// never a hang; ioredis reconnects by itself with backoff (through the Sentinels to whichever primary they
// name now). Where it does not, the primary watch (primary-watch.ts) replaces the client.
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../core/config.js';

export type RedisClient = Redis | Cluster;

/** Commands (fail fast), or pub/sub (subscriptions queue while the link is away, and are made again after). */
export type ClientPurpose = 'commands' | 'pub/sub';

/** Reconnect forever, backing off to 2 s: Redis coming back must need no restart. */
const retry = (times: number) => Math.min(100 * times, 2_000);

export function createClient(target: RedisTarget, commandTimeout: number, purpose: ClientPurpose): RedisClient {
  const queue = purpose === 'pub/sub';
  const common: RedisOptions = {
    maxRetriesPerRequest: queue ? null : 1,
    enableOfflineQueue: queue,
    connectTimeout: 2_000,
    commandTimeout,
    retryStrategy: retry,
    reconnectOnError: () => false,
    // A command whose reply was lost with the link has already failed to its caller, who answered from
    // local state (degraded-mode.ts): sent again on the next link it would count a budget reservation twice.
    autoResendUnfulfilledCommands: false,
  };
  if (target.kind === 'redis') return new Redis(target.url, common);
  const auth: RedisOptions = {
    username: target.username,
    password: target.password,
    ...(target.tls ? { tls: {} } : {}),
  };
  if (target.kind === 'redis-sentinel') {
    return new Redis({
      ...common,
      ...auth,
      sentinels: target.sentinels,
      name: target.name,
      sentinelPassword: target.sentinelPassword,
      sentinelRetryStrategy: retry,
      // Off (ioredis's default), on purpose. ioredis 6's failover detector ends the connector when a
      // Sentinel announces +switch-master; if that lands while the client is reconnecting and waiting on a
      // Sentinel's answer (SentinelConnector.connect, `if (!this.connecting) throw` "Connection is closed."),
      // the client goes to status "end" and never reconnects: the one replica in seven left on local state
      // for good (issue 38). A killed primary closes our socket anyway, and a demoted one has its clients
      // killed by the Sentinels; a primary that hangs without closing is what the primary watch catches.
      failoverDetector: false,
    });
  }
  const options: ClusterOptions = {
    enableOfflineQueue: queue,
    clusterRetryStrategy: retry,
    scaleReads: 'master',
    slotsRefreshTimeout: 2_000,
    redisOptions: { ...common, maxRetriesPerRequest: 1, enableOfflineQueue: false, ...auth },
    // Managed Clusters over TLS announce names their certificates carry: connect by name, not by a resolved address.
    ...(target.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
  };
  return new Cluster(target.nodes, options);
}

/** Where the node's socket goes (through Sentinel, the options name no node at all). */
export function addressOf(node: Redis): string {
  const socket = node.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  if (socket?.remoteAddress !== undefined) return `${socket.remoteAddress}:${socket.remotePort}`;
  return `${node.options.host}:${node.options.port}`;
}

/** The primaries a client sends commands to, host:port, sorted (one for a node or a Sentinel's primary). */
export function primariesInUse(client: RedisClient): string[] {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  return nodes.map(addressOf).sort();
}
