// The composition root: every store, cache, budget, upstream client, service and the broker, built once
// from the validated configuration. Routes receive what they use from here and build nothing themselves.
// Without REDIS_URL the cache's second tier and the budget ledgers live in the embedded SQLite store
// under STATE_DIR; with it, in Redis, shared by every replica (see src/store/).
import type { Logger } from 'pino';
import type { Broker } from './broker/broker.js';
import { BrokerAccess } from './broker/broker-access.js';
import { StreamTickets } from './broker/stream-tickets.js';
import { type Pacer, RequestPacer } from './broker/request-pacer.js';
import { SharedRequestPacer } from './broker/shared-request-pacer.js';
import { type BudgetLimits, MAX_PACING_WAIT_MS } from './budget/budget-guard.js';
import { type BudgetFactory, BudgetRegistry } from './budget/budget-registry.js';
import { EmbeddedBudgetGuard } from './budget/embedded-budget-guard.js';
import { MemoryBudgetGuard } from './budget/memory-budget-guard.js';
import { RedisBudgetGuard } from './budget/redis-budget-guard.js';
import type { CacheStore, CacheWindow } from './cache/cache-store.js';
import { RedisFlightLock } from './cache/flight-lock.js';
import { MemoryCacheStore } from './cache/memory-cache-store.js';
import { RedisCacheStore } from './cache/redis-cache-store.js';
import { SqliteCacheStore } from './cache/sqlite-cache-store.js';
import { UpstreamCache } from './cache/upstream-cache.js';
import type { Config } from './core/config.js';
import { type Configured, configured, notConfigured, optional } from './core/configured.js';
import { BarStore } from './services/bar-store.js';
import { ComputedTechnical } from './services/computed-technical.js';
import { SourceTally } from './services/data-source.js';
import { SeriesQuotes } from './services/series-quotes.js';
import { QuoteService } from './services/quote-service.js';
import { TechnicalService } from './services/technical-service.js';
import { MarketOverview } from './services/market-overview.js';
import { SearchService } from './services/search-service.js';
import { SeriesService } from './services/series-service.js';
import { DividendService } from './services/dividend-service.js';
import { ForwardService } from './services/forward-service.js';
import { AlphaVantageQuery } from './services/alpha-vantage-query.js';
import { BrokerService } from './services/broker-service.js';
import { StateStore } from './store/state-store.js';
import { StateScopes } from './store/upstream-identity.js';
import { ALPHA_VANTAGE, IBKR, MASSIVE, UPSTREAMS, type UpstreamId, YAHOO } from './core/upstream-ids.js';
import { AlphaVantageClient } from './upstreams/alpha-vantage/alpha-vantage-client.js';
import { HttpClient } from './upstreams/http-client.js';
import { useOutboundRoutes } from './upstreams/outbound-proxy.js';
import { gatewayHosts, OutboundRoutes } from './core/outbound-routes.js';
import { IbkrBroker, type IbkrBrokerOptions } from './upstreams/ibkr/ibkr-broker.js';
import { ibkrPacerOptions } from './upstreams/ibkr/ibkr-gateway.js';
import { cursorKeys } from './upstreams/massive/cursor-keys.js';
import { CursorCodec } from './upstreams/massive/dividend-cursor.js';
import { MassiveClient } from './upstreams/massive/massive-client.js';
import { TastytradeBroker, type TastytradeBrokerOptions } from './upstreams/tastytrade/tastytrade-broker.js';
import { TastytradeQuoteStream, type TastytradeQuoteStreamOptions } from './upstreams/tastytrade/tastytrade-quote-stream.js';
import { UpstreamHealth } from './health/upstream-health.js';
import { UpstreamCallMetrics } from './health/upstream-call-metrics.js';
import { YahooChartSource } from './upstreams/yahoo/yahoo-chart-source.js';
import type { BrokerQuoteStream } from './broker/quote-stream.js';
import { IbkrQuoteStream, type IbkrQuoteStreamOptions } from './upstreams/ibkr/ibkr-quote-stream.js';
import { LiveTopics } from './stream/live-topics.js';
import { SharedQuoteStream } from './stream/shared-quote-stream.js';
import type { Topic } from './stream/stream-topics.js';
import { TopicRelay } from './stream/topic-relay.js';

export interface AppDeps {
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
  /** Quotes from provider A, with Yahoo's quote from the stored daily bars as the fallback (QUOTE_FALLBACK). */
  quotes: QuoteService;
  /** Technical indicators from provider A or computed from the stored bars, as TECHNICAL_SOURCE says. */
  technical: TechnicalService;
  /** Provider A's SYMBOL_SEARCH. */
  search: SearchService;
  /** Provider A's TIME_SERIES_* functions. */
  series: SeriesService;
  /** /query: Alpha Vantage's parameters read; each function answered by the service that owns it, the rest forwarded. */
  query: AlphaVantageQuery;
  /** Provider B's dividends, a page at a time. */
  dividends: DividendService;
  /** The stored Yahoo bar series quotes and computed indicators read; undefined when QUOTE_FALLBACK is `none`. */
  bars: BarStore | undefined;
  /** Not configured when OVERVIEW_SOURCE is `none`. */
  overview: Configured<MarketOverview>;
  /** The broker BROKER names; not configured with BROKER=none or Tastytrade without credentials. */
  broker: Configured<Broker>;
  /** The broker's health, accounts, positions and quotes. */
  brokerData: BrokerService;
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
  close(): Promise<void>;
}

interface BrokerOptions {
  ibkr?: Partial<Omit<IbkrBrokerOptions, 'url' | 'tlsVerify' | 'logger'>>;
  /** The IBKR websocket's timings (heartbeat watch, renewals, back-off). */
  ibkrStream?: Partial<Omit<IbkrQuoteStreamOptions, 'url' | 'tlsVerify' | 'session' | 'logger'>>;
  /** The shared stream's REST retention and renewal period. */
  streaming?: { retentionMs?: number; renewMs?: number };
  tastytrade?: Partial<Omit<TastytradeBrokerOptions, 'url' | 'clientSecret' | 'refreshToken' | 'logger'>>;
  /** The DXLink feed's timings (keepalives, token renewal, back-off). */
  tastytradeStream?: Partial<Omit<TastytradeQuoteStreamOptions, 'session' | 'logger'>>;
}

export interface CreateDepsOptions {
  /** Replica heartbeat period (Redis mode); tests shorten it. */
  heartbeatMs?: number;
  /** Budget windows for benchmarks that scale time (their minute and day are shorter). */
  budgets?: Partial<Record<UpstreamId, BudgetLimits>>;
  /** Broker tuning for tests and benchmarks (keep-alive period, warm-up, pacing). */
  broker?: BrokerOptions;
}

/** A cursor outlives every cached page that links to it: the page's fresh and stale windows, plus an hour to follow it. */
const CURSOR_FOLLOW_MS = 3_600_000;

export async function createDeps(config: Config, logger: Logger, options: CreateDepsOptions = {}): Promise<AppDeps> {
  // Every upstream client and broker socket asks this table which proxy, if any, a target goes through.
  const routes = new OutboundRoutes(config.proxy, gatewayHosts(config.broker.kind, config.broker.ibkr.url));
  useOutboundRoutes(routes);
  if (!routes.direct) {
    const { https, http, noProxy } = config.proxy;
    logger.info({ https: https?.address, http: http?.address, noProxy }, 'upstream calls go through an outbound proxy');
  }
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
  const limits = (id: UpstreamId, configured: BudgetLimits) => budgets.get(id, options.budgets?.[id] ?? configured);
  const http = (id: UpstreamId, connections?: number) => {
    const client = new HttpClient({ name: UPSTREAMS[id].label, timeoutMs: config.upstreamTimeoutMs, logger, connections });
    closers.push(() => client.close());
    return client;
  };
  const sources = new SourceTally();

  const av = config.alphaVantage;
  const avBudget = limits(ALPHA_VANTAGE, { perMinute: av.callsPerMinute, perDay: av.callsPerDay, minIntervalMs: av.minIntervalMs });
  const alphaVantage = optional(
    av.apiKey === undefined
      ? undefined
      : new AlphaVantageClient({
          url: av.url,
          apiKey: av.apiKey,
          http: http(ALPHA_VANTAGE),
          budget: avBudget,
          entitlement: av.entitlement,
          plan: av.plan,
        }),
    'provider A is not configured: set ALPHA_VANTAGE_API_KEY',
  );

  // One Yahoo client and pool for the overview and both fallbacks, under one budget.
  const yahooUsed = config.overview.source === 'yahoo' || config.yahoo.quoteFallback === 'yahoo';
  const yahoo = yahooUsed
    ? new YahooChartSource({
        url: config.overview.url,
        http: http(YAHOO, config.overview.concurrency),
        budget: limits(YAHOO, { perMinute: config.yahoo.callsPerMinute, perDay: 0, minIntervalMs: 0 }),
      })
    : undefined;
  const { windows } = config.cache;
  const bars =
    config.yahoo.quoteFallback === 'yahoo' && yahoo !== undefined
      ? new BarStore({ cache, chart: yahoo, scope: scopes.of(YAHOO), windows: seriesWindows(windows) })
      : undefined;
  const quotes = new QuoteService({
    cache,
    window: windows.QUOTE,
    scope: scopes.of(ALPHA_VANTAGE),
    alphaVantage,
    entitlement: av.entitlement,
    limits: avBudget.limits,
    fallback: bars && new SeriesQuotes({ bars, window: windows.QUOTE }),
    tally: sources,
  });
  const technicalWindows = { daily: windows.TECHNICAL_DAILY, intraday: windows.TECHNICAL_INTRADAY };
  const technical = new TechnicalService({
    cache,
    windows: technicalWindows,
    scopes: { primary: scopes.of(ALPHA_VANTAGE), fallback: scopes.of(YAHOO) },
    alphaVantage,
    computed: bars && new ComputedTechnical({ bars, windows: technicalWindows }),
    source: config.technical.source,
    tally: sources,
  });

  const search = new SearchService({ cache, window: windows.SEARCH, scope: scopes.of(ALPHA_VANTAGE), alphaVantage });
  const series = new SeriesService({
    cache,
    windows: { daily: windows.SERIES_DAILY, intraday: windows.SERIES_INTRADAY },
    scope: scopes.of(ALPHA_VANTAGE),
    alphaVantage,
    entitlement: av.entitlement,
  });
  const forwarded = new ForwardService({ cache, windows: config.cache.avFamilies, scope: scopes.of(ALPHA_VANTAGE), alphaVantage });

  const mv = config.massive;
  const massiveBudget = limits(MASSIVE, { perMinute: mv.callsPerMinute, perDay: 0, minIntervalMs: 0 });
  const massive = optional(
    mv.apiKey === undefined ? undefined : new MassiveClient({ url: mv.url, apiKey: mv.apiKey, http: http(MASSIVE), budget: massiveBudget }),
    'provider B is not configured: set MASSIVE_API_KEY',
  );
  const cursors = new CursorCodec({
    keys: await cursorKeys(config.cursorSecret, store.shared, logger),
    // Bound to the mode and Massive identity (URL and key): a cursor of another one is foreign here.
    context: scopes.of(MASSIVE),
    ttlMs: windows.DIVIDENDS.freshMs + windows.DIVIDENDS.staleMs + CURSOR_FOLLOW_MS,
  });

  const overview: Configured<MarketOverview> =
    config.overview.source === 'yahoo' && yahoo !== undefined
      ? configured(
          new MarketOverview({
            source: yahoo,
            scope: scopes.of(YAHOO),
            symbols: config.overview.symbols,
            concurrency: config.overview.concurrency,
            window: windows.OVERVIEW,
            cache,
            health,
            logger,
          }),
        )
      : notConfigured('the market overview is switched off (OVERVIEW_SOURCE=none)');

  const broker = createBroker(config, logger, options.broker ?? {}, store, scopes);
  const liveTopics = new LiveTopics();
  const upstreamOfTopic = {
    quote: ALPHA_VANTAGE,
    brokerQuotes: config.broker.kind,
    overview: config.overview.source,
    status: 'none',
  } as const;
  const relay =
    store.shared === undefined
      ? undefined
      : new TopicRelay({
          shared: store.shared,
          topics: liveTopics,
          logger,
          scopeOf: (topic: Topic) => scopes.of(upstreamOfTopic[topic.kind]),
        });
  const feed = quoteFeed(config, logger, broker, options.broker ?? {});
  const brokerQuotes =
    feed === undefined
      ? undefined
      : new SharedQuoteStream({
          broker: config.broker.kind,
          create: feed,
          relay,
          scope: scopes.of(config.broker.kind),
          logger,
          ...options.broker?.streaming,
        });
  // The stream before the relay it publishes on, the relay before the store whose Redis it uses, the broker last.
  closers.unshift(async () => {
    await brokerQuotes?.close();
    await relay?.close();
  });
  closers.push(async () => {
    if (broker.configured) await broker.client.close();
  });

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
    quotes,
    technical,
    bars,
    search,
    series,
    query: new AlphaVantageQuery({ quotes, technical, search, series, forwarded }),
    dividends: new DividendService({ cache, window: windows.DIVIDENDS, scope: scopes.of(MASSIVE), massive, cursors }),
    overview,
    broker,
    brokerData: new BrokerService({
      cache,
      broker,
      kind: config.broker.kind,
      scope: scopes.of(config.broker.kind),
      windows: { accounts: windows.BROKER_ACCOUNTS, positions: windows.BROKER_POSITIONS, quotes: windows.BROKER_QUOTES },
      feed: brokerQuotes,
      health,
    }),
    brokerAccess: new BrokerAccess(config.broker.access, config.trustProxy),
    streamTickets: new StreamTickets(store.shared),
    liveTopics,
    relay,
    brokerQuotes,
    close: async () => {
      for (const close of closers) await close();
      await store.close();
    },
  };
}

/** A daily series is kept at least a week (a weekend or a holiday later it is extended, not fetched again), an intraday one a day. */
const KEEP_DAILY_SERIES_MS = 7 * 86_400_000;
const KEEP_INTRADAY_SERIES_MS = 86_400_000;

/**
 * The windows of stored bar series: fresh for the shortest window a reader holds them to (the quote's, the
 * intraday indicators'), so that a refresh another replica just made is taken as it is; kept for the
 * longest, and at least KEEP_*, so that a series is still there to be extended.
 */
function seriesWindows(windows: Config['cache']['windows']): { daily: CacheWindow; intraday: CacheWindow } {
  const span = (w: CacheWindow) => w.freshMs + w.staleMs;
  const { QUOTE, TECHNICAL_DAILY, TECHNICAL_INTRADAY } = windows;
  const dailyFresh = Math.min(QUOTE.freshMs, TECHNICAL_DAILY.freshMs);
  return {
    daily: { freshMs: dailyFresh, staleMs: Math.max(span(QUOTE), span(TECHNICAL_DAILY), KEEP_DAILY_SERIES_MS) - dailyFresh },
    intraday: {
      freshMs: TECHNICAL_INTRADAY.freshMs,
      staleMs: Math.max(span(TECHNICAL_INTRADAY), KEEP_INTRADAY_SERIES_MS) - TECHNICAL_INTRADAY.freshMs,
    },
  };
}

function createCache(
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
  });
  return { cache, closeL2 };
}

/** Ledgers are stored under the upstream's scope; the guard keeps its plain name for status and messages. */
function budgetFactory(store: StateStore, scopes: StateScopes): BudgetFactory {
  return (name: string, limits: BudgetLimits) => {
    // An uncapped upstream has nothing to count or share: the in-process guard only keeps back-offs.
    if (limits.perMinute === 0 && limits.perDay === 0 && limits.minIntervalMs === 0) return new MemoryBudgetGuard(name, limits);
    const shared = store.shared;
    if (shared !== undefined) return new RedisBudgetGuard(name, limits, shared, MAX_PACING_WAIT_MS, scopes.of(name));
    if (store.db !== undefined) return new EmbeddedBudgetGuard(name, limits, store.db, MAX_PACING_WAIT_MS, Date.now, scopes.of(name));
    return new MemoryBudgetGuard(name, limits);
  };
}

/** The broker BROKER names; its keep-alive starts with the app (app.ts) and stops with close(). */
function createBroker(config: Config, logger: Logger, options: BrokerOptions, store: StateStore, scopes: StateScopes): Configured<Broker> {
  const { broker, upstreamTimeoutMs } = config;
  switch (broker.kind) {
    case 'none':
      return notConfigured('No broker is configured (BROKER=none): set BROKER to ibkr or tastytrade.');
    case 'ibkr': {
      const gateway = { pacer: ibkrPacer(config, store, scopes), ...options.ibkr?.gateway };
      return configured<Broker>(
        new IbkrBroker({
          timeoutMs: upstreamTimeoutMs,
          ...options.ibkr,
          gateway,
          url: broker.ibkr.url,
          tlsVerify: broker.ibkr.tlsVerify,
          logger,
        }),
      );
    }
    case 'tastytrade': {
      const { url, clientSecret, refreshToken } = broker.tastytrade;
      if (clientSecret === undefined || refreshToken === undefined) {
        return notConfigured('Tastytrade is not configured: set TASTYTRADE_CLIENT_SECRET and TASTYTRADE_REFRESH_TOKEN.');
      }
      return configured<Broker>(
        new TastytradeBroker({ timeoutMs: upstreamTimeoutMs, ...options.tastytrade, url, clientSecret, refreshToken, logger }),
      );
    }
  }
}

/** The broker's real-time feed, where BROKER_STREAMING allows it: IBKR's websocket or Tastytrade's DXLink. */
function quoteFeed(
  config: Config,
  logger: Logger,
  broker: Configured<Broker>,
  options: BrokerOptions,
): (() => BrokerQuoteStream) | undefined {
  if (config.broker.streaming === 'off' || !broker.configured) return undefined;
  const session = broker.client;
  if (session instanceof IbkrBroker) {
    const { url, tlsVerify } = config.broker.ibkr;
    return () => new IbkrQuoteStream({ ...options.ibkrStream, url, tlsVerify, session, logger });
  }
  if (session instanceof TastytradeBroker) return () => new TastytradeQuoteStream({ ...options.tastytradeStream, session, logger });
  return undefined;
}

/** One pacing per gateway: shared by every replica through Redis when there is one. */
function ibkrPacer(config: Config, store: StateStore, scopes: StateScopes): Pacer {
  const options = ibkrPacerOptions(config.broker.ibkr.requestsPerSecond);
  const shared = store.shared;
  if (shared === undefined) return new RequestPacer(options);
  return new SharedRequestPacer(options, shared, scopes.of(IBKR));
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    hotPath: import('./plugins/app/hot-path.js').HotPath;
  }
}
