// The composition root: every store, cache, budget, upstream client, service and the broker, built once
// from the validated configuration. Routes receive what they use from here and build nothing themselves.
// Without REDIS_URL the cache's second tier and the budget ledgers live in the embedded SQLite store
// under STATE_DIR; with it, in Redis, shared by every replica (see src/store/). Each area is built in its
// own file under src/deps/ (state, upstreams, market services, broker, streams), composed here and only here.
import type { Logger } from 'pino';
import type { Broker } from './broker/broker.js';
import { BrokerAccess } from './broker/broker-access.js';
import { StreamTickets } from './broker/stream-tickets.js';
import type { BudgetLimits } from './budget/budget-guard.js';
import { BudgetRegistry } from './budget/budget-registry.js';
import type { UpstreamCache } from './cache/upstream-cache.js';
import { ClientKeys } from './core/client-keys.js';
import type { Config } from './core/config.js';
import type { Configured } from './core/configured.js';
import { gatewayHosts, OutboundRoutes } from './core/outbound-routes.js';
import type { UpstreamId } from './core/upstream-ids.js';
import { type BrokerOptions, createBroker } from './deps/broker.js';
import { createMarketServices, type MarketServices } from './deps/market-services.js';
import { budgetFactory, createCache } from './deps/state.js';
import { createStreams } from './deps/streams.js';
import { createUpstreams } from './deps/upstreams.js';
import { UpstreamCallMetrics } from './health/upstream-call-metrics.js';
import { UpstreamHealth } from './health/upstream-health.js';
import { BrokerService } from './services/broker-service.js';
import { SourceTally } from './services/data-source.js';
import { StateStore } from './store/state-store.js';
import { StateScopes } from './store/upstream-identity.js';
import type { LiveTopics } from './stream/live-topics.js';
import type { SharedQuoteStream } from './stream/shared-quote-stream.js';
import type { TopicRelay } from './stream/topic-relay.js';
import { OutboundProxy } from './upstreams/outbound-proxy.js';

/** Everything the app is built from; the market services (quotes, indicators, /query, dividends, overview) in MarketServices. */
export interface AppDeps extends MarketServices {
  config: Config;
  logger: Logger;
  health: UpstreamHealth;
  /** The duration of every upstream call health tracks, for /metrics. */
  upstreamCalls: UpstreamCallMetrics;
  cache: UpstreamCache;
  budgets: BudgetRegistry;
  /** Embedded or Redis state; `status()` says which and whether Redis is reachable. */
  store: StateStore;
  /** Key prefixes by upstream: every stored key starts with the scope of the upstream it came from. */
  scopes: StateScopes;
  /** Answers per endpoint and data source (X-Data-Source), for status and metrics. */
  sources: SourceTally;
  /** The broker BROKER names; not configured with BROKER=none or Tastytrade without credentials. */
  broker: Configured<Broker>;
  /** The broker's health, accounts, positions and quotes. */
  brokerData: BrokerService;
  /** Callers with keys of their own (CLIENT_KEYS): their own share, rate limit and scopes. */
  clientKeys: ClientKeys;
  /** Who may read broker data (BROKER_ALLOW_FROM, BROKER_TOKEN, BROKER_CORS_ORIGINS). */
  brokerAccess: BrokerAccess;
  /** One-time tickets that admit a browser's EventSource to broker stream topics. */
  streamTickets: StreamTickets;
  /** What each stream topic is read from; filled by the route plugins. */
  liveTopics: LiveTopics;
  /** Stream topics and the broker stream across replicas; undefined with the embedded store. */
  relay: TopicRelay | undefined;
  /** The broker's real-time quotes, one feed for the deployment; undefined when BROKER_STREAMING=off or the broker has none. */
  brokerQuotes: SharedQuoteStream | undefined;
  /** Which proxy, if any, each upstream is reached through (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, PROXY_ALSO_FOR). */
  outbound: OutboundProxy;
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  /** Replica heartbeat period (Redis mode); tests shorten it. */
  heartbeatMs?: number;
  /** Budget windows for benchmarks that scale time (their minute and day are shorter). */
  budgets?: Partial<Record<UpstreamId, BudgetLimits>>;
  /** Broker tuning for tests and benchmarks (keep-alive period, warm-up, pacing). */
  broker?: BrokerOptions;
}

export async function createDeps(config: Config, logger: Logger, options: CreateDepsOptions = {}): Promise<AppDeps> {
  const outbound = outboundProxy(config, logger);
  // While a broker's circuit is open its callers hear "broker unavailable", as they would from the broker.
  const upstreamCalls = new UpstreamCallMetrics();
  const health = new UpstreamHealth({
    openCode: (upstream) => (upstream === config.broker.kind ? 'BROKER_UNAVAILABLE' : 'UPSTREAM_ERROR'),
    observer: upstreamCalls.observe,
  });
  const store = await StateStore.open({
    stateDir: config.stateDir,
    redis: config.redis.target,
    redisKeyPrefix: config.redis.keyPrefix,
    logger,
    heartbeatMs: options.heartbeatMs,
  });
  const closers: (() => Promise<void> | void)[] = [];
  const { cache, closeL2 } = createCache(config, logger, health, store);
  closers.push(closeL2);
  const scopes = StateScopes.fromConfig(config);
  const budgets = new BudgetRegistry(budgetFactory(store, scopes));
  const sources = new SourceTally();
  const upstreams = createUpstreams({
    config,
    logger,
    budgets,
    budgetOverrides: options.budgets,
    outbound,
    onClose: (close) => closers.push(close),
  });
  const services = await createMarketServices({ config, logger, cache, health, store, scopes, sources, upstreams });

  const brokerOptions = options.broker ?? {};
  const broker = createBroker(config, logger, brokerOptions, store, scopes, outbound);
  const streams = createStreams(config, logger, { store, scopes }, broker, brokerOptions);
  // The streams before the store whose Redis they use, the broker last.
  closers.unshift(streams.close);
  closers.push(async () => {
    if (broker.configured) await broker.client.close();
    outbound.close();
  });

  const { windows } = config.cache;
  return {
    config,
    logger,
    health,
    upstreamCalls,
    cache,
    budgets,
    store,
    scopes,
    sources,
    ...services,
    broker,
    brokerData: new BrokerService({
      cache,
      broker,
      kind: config.broker.kind,
      scope: scopes.of(config.broker.kind),
      windows: { accounts: windows.BROKER_ACCOUNTS, positions: windows.BROKER_POSITIONS, quotes: windows.BROKER_QUOTES },
      feed: streams.brokerQuotes,
      health,
    }),
    // The other bearer tokens open their own routes: sent there, they are not a wrong client key.
    clientKeys: new ClientKeys(config.clientKeys, [config.broker.access.token, config.metrics.token, config.mcp.token]),
    brokerAccess: new BrokerAccess(config.broker.access, config.trustProxy),
    streamTickets: new StreamTickets(store.shared),
    liveTopics: streams.liveTopics,
    relay: streams.relay,
    brokerQuotes: streams.brokerQuotes,
    outbound,
    close: async () => {
      for (const close of closers) await close();
      await store.close();
    },
  };
}

/** The one table every upstream client and broker socket asks which proxy, if any, a target goes through. */
function outboundProxy(config: Config, logger: Logger): OutboundProxy {
  const routes = new OutboundRoutes(config.proxy, gatewayHosts(config.broker.kind, config.broker.ibkr.url));
  if (!routes.direct) {
    const { https, http, noProxy } = config.proxy;
    logger.info({ https: https?.address, http: http?.address, noProxy }, 'upstream calls go through an outbound proxy');
  }
  return new OutboundProxy(routes);
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    hotPath: import('./plugins/app/hot-path.js').HotPath;
  }
}
