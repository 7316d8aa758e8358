// Every environment variable the service reads, with its type, range, default and meaning: the one
// source that config.ts validates against (env-schema, TypeBox) and that the README's configuration table
// and .env.example are checked against (test/config-schema.test.ts). Defaults that depend on other
// variables (DATA_MODE, LOG_FORMAT, QUOTE_FALLBACK) are worked out in config.ts and say so here.
import { type TSchema, Type } from '@sinclair/typebox';

/** Schema annotation: never echo the value in a message (keys, tokens, a Redis URL with a password). */
export const SECRET = 'x-secret';

const int = (fallback: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: fallback, minimum, maximum, description });
const count = (fallback: number, description: string) => int(fallback, 0, Number.MAX_SAFE_INTEGER, description);
const text = (fallback: string, description: string) => Type.String({ default: fallback, description });
const optional = (description: string, options: Record<string, unknown> = {}) => Type.Optional(Type.String({ description, ...options }));
const secret = (description: string) => optional(description, { [SECRET]: true });
const oneOf = <T extends string>(values: readonly T[], description: string, fallback?: T) =>
  fallback === undefined
    ? Type.Optional(Type.Unsafe<T>({ type: 'string', enum: [...values], description }))
    : Type.Unsafe<T>({ type: 'string', enum: [...values], default: fallback, description });

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const TECHNICAL_SOURCES = ['auto', 'provider', 'computed'] as const;
const BOOLEAN_WORDS = ['1', 'true', 'yes', 'on', '0', 'false', 'no', 'off'] as const;

export const CACHE_WINDOWS = {
  QUOTE: { fresh: 60, stale: 86_400 },
  TECHNICAL_DAILY: { fresh: 3_600, stale: 86_400 },
  TECHNICAL_INTRADAY: { fresh: 60, stale: 3_600 },
  SEARCH: { fresh: 86_400, stale: 604_800 },
  SERIES_DAILY: { fresh: 3_600, stale: 86_400 },
  SERIES_INTRADAY: { fresh: 60, stale: 3_600 },
  OVERVIEW: { fresh: 60, stale: 3_600 },
  DIVIDENDS: { fresh: 43_200, stale: 604_800 },
  BROKER_QUOTES: { fresh: 1, stale: 10 },
  BROKER_ACCOUNTS: { fresh: 60, stale: 600 },
  BROKER_POSITIONS: { fresh: 5, stale: 60 },
} as const;
export type CacheWindowName = keyof typeof CACHE_WINDOWS;

/**
 * The families of Alpha Vantage functions the service forwards (wire/alpha-vantage/functions.ts), each cached
 * for its own fresh window: a day for what changes daily or slower, a minute for rates, quotes and intraday
 * series, 15 minutes for news. `stale`: how long after that an answer may still be served while the provider
 * cannot answer (not a setting).
 */
export const AV_FAMILIES = {
  FUNDAMENTALS: { fresh: 86_400, stale: 604_800, what: 'company fundamentals, earnings, filings (OVERVIEW, INCOME_STATEMENT, …)' },
  LISTINGS: { fresh: 86_400, stale: 604_800, what: 'listings and catalogues (LISTING_STATUS, INDEX_CATALOG, …)' },
  CALENDARS: { fresh: 86_400, stale: 604_800, what: 'the earnings and IPO calendars' },
  ECONOMIC: { fresh: 86_400, stale: 604_800, what: 'economic indicators (REAL_GDP, TREASURY_YIELD, …)' },
  COMMODITIES: { fresh: 86_400, stale: 604_800, what: 'commodity prices (WTI, COPPER, …)' },
  FX: { fresh: 60, stale: 86_400, what: 'FX exchange rates and FX series (CURRENCY_EXCHANGE_RATE, FX_DAILY, …)' },
  CRYPTO: { fresh: 60, stale: 86_400, what: 'crypto series (DIGITAL_CURRENCY_DAILY, …)' },
  INTRADAY: { fresh: 60, stale: 3_600, what: 'intraday series, and forwarded indicators on an intraday interval' },
  NEWS: { fresh: 900, stale: 86_400, what: 'NEWS_SENTIMENT' },
  OPTIONS: { fresh: 60, stale: 3_600, what: 'options chains and put-call ratios' },
  MARKET: { fresh: 60, stale: 3_600, what: 'market-wide and live answers (TOP_GAINERS_LOSERS, MARKET_STATUS, bulk quotes, …)' },
  SERIES: {
    fresh: 3_600,
    stale: 86_400,
    what: 'daily-or-longer series the service does not store (adjusted series, INDEX_DATA, analytics)',
  },
  INDICATORS: {
    fresh: 3_600,
    stale: 86_400,
    what: 'indicators the service does not compute (MACDEXT, STOCHRSI, …) on a daily or longer interval',
  },
} as const;
export type AvFamily = keyof typeof AV_FAMILIES;

const YEAR_SECONDS = 31_536_000;
const cacheWindowVariables: Record<string, TSchema> = Object.fromEntries(
  Object.entries(CACHE_WINDOWS).flatMap(([name, { fresh, stale }]) => [
    [`CACHE_${name}_FRESH_SECONDS`, int(fresh, 0, YEAR_SECONDS, `How long a ${name} answer is fresh.`)],
    [`CACHE_${name}_STALE_SECONDS`, int(stale, 0, YEAR_SECONDS, `How long after that a ${name} answer may still be served stale.`)],
  ]),
);

const avFamilyVariables: Record<string, TSchema> = Object.fromEntries(
  Object.entries(AV_FAMILIES).map(([name, { fresh, stale, what }]) => [
    `CACHE_AV_${name}_SECONDS`,
    int(
      fresh,
      0,
      YEAR_SECONDS,
      `How long a forwarded Alpha Vantage answer of ${what} is fresh (then served stale, while the provider cannot answer, for ${stale} s at most).`,
    ),
  ]),
);

/** @internal */
export const DEFAULT_OVERVIEW_SYMBOLS = ['^GSPC', '^DJI', '^IXIC', '^RUT', '^VIX', 'GC=F', 'SI=F', 'CL=F', 'BTC-USD', 'ETH-USD'];

export const EnvSchema = Type.Object({
  PORT: int(3000, 0, 65_535, 'Listen port.'),
  HOST: text('127.0.0.1', 'Listen address.'),
  TLS_CERT_FILE: optional('With TLS_KEY_FILE: serve HTTPS.'),
  TLS_KEY_FILE: optional('With TLS_CERT_FILE: serve HTTPS.'),
  CORS_ORIGINS: text('*', 'Comma list of allowed origins (strict when set).'),
  DATA_MODE: oneOf(['sandbox', 'live'] as const, 'Default: live when any credential is set, else sandbox.'),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'Log level.', 'info'),
  LOG_FORMAT: oneOf(['json', 'pretty'] as const, 'Default: pretty on a terminal, json otherwise.'),
  TRUST_PROXY: text('false', 'Honour X-Forwarded-For only from these proxies: true, a hop count, or a comma list of addresses/CIDRs.'),
  RATE_LIMIT_PER_MINUTE: count(600, 'Requests per client address per minute (0 = off).'),
  UPSTREAM_TIMEOUT_MS: int(8_000, 100, 120_000, 'Deadline of one upstream call.'),
  HEADERS_TIMEOUT_MS: int(10_000, 100, 120_000, 'A client must send its headers within this.'),
  REQUEST_TIMEOUT_MS: int(30_000, 100, 600_000, 'A client must send its whole request within this.'),
  KEEP_ALIVE_TIMEOUT_MS: int(72_000, 100, 600_000, 'Idle keep-alive connections close after this.'),
  ALPHA_VANTAGE_API_KEY: secret('Provider A key.'),
  ALPHA_VANTAGE_URL: text('https://www.alphavantage.co/query', 'Provider A endpoint.'),
  ALPHA_VANTAGE_CALLS_PER_MINUTE: count(5, 'Provider A calls per minute (0 = no cap).'),
  ALPHA_VANTAGE_CALLS_PER_DAY: count(500, 'Provider A calls per rolling 24 hours (0 = no cap).'),
  ALPHA_VANTAGE_MIN_INTERVAL_MS: int(
    1_200,
    0,
    60_000,
    'Minimum spacing of provider A calls (the provider allows 1 a second; the slack absorbs jitter). Default 1500 when its calls go through an outbound proxy: a new tunnel delays the first call of a burst.',
  ),
  ALPHA_VANTAGE_ENTITLEMENT: oneOf(
    ['delayed', 'realtime'] as const,
    "Provider A's plan for US market data, sent as its `entitlement` parameter on quotes and intraday series: delayed (15-minute delayed) or realtime. Unset: the free plan's data, updated at the end of each trading day, and said to be end-of-day (X-Data-Freshness).",
  ),
  ALPHA_VANTAGE_PLAN: oneOf(
    ['free', 'premium'] as const,
    "The key's plan: free answers a premium function with Alpha Vantage's own premium notice at once, no call spent (indicators the service computes are computed); premium asks the provider. Set the premium plan's rate in ALPHA_VANTAGE_CALLS_PER_MINUTE.",
    'free',
  ),
  MASSIVE_API_KEY: secret('Provider B key.'),
  MASSIVE_URL: text('https://api.massive.com', 'Provider B endpoint.'),
  MASSIVE_CALLS_PER_MINUTE: count(5, 'Provider B calls per minute (0 = no cap).'),
  OVERVIEW_SOURCE: oneOf(['yahoo', 'none'] as const, 'Market overview source; none switches it off.', 'yahoo'),
  YAHOO_URL: text('https://query1.finance.yahoo.com', "Yahoo's chart API."),
  OVERVIEW_SYMBOLS: text(DEFAULT_OVERVIEW_SYMBOLS.join(','), 'Comma list of overview instruments.'),
  OVERVIEW_CONCURRENCY: int(4, 1, 32, 'Overview instruments fetched at once.'),
  YAHOO_CALLS_PER_MINUTE: count(60, 'Budget of all Yahoo calls (0 = no cap).'),
  QUOTE_FALLBACK: oneOf(
    ['yahoo', 'none'] as const,
    "Quotes and indicators provider A cannot answer come from Yahoo's chart API (default yahoo; none when OVERVIEW_SOURCE=none).",
  ),
  TECHNICAL_SOURCE: oneOf(
    TECHNICAL_SOURCES,
    "Where indicators come from: auto (computed from Yahoo's bars where they can be, provider A for the rest), provider (provider A, computed when it cannot answer) or computed (never provider A).",
    'auto',
  ),
  BROKER: oneOf(['ibkr', 'tastytrade', 'none'] as const, 'The broker behind /api/broker.', 'ibkr'),
  BROKER_STREAMING: oneOf(
    ['auto', 'off'] as const,
    "auto: broker quotes from the broker's real-time feed where it has one (IBKR's websocket); off: snapshots.",
    'auto',
  ),
  IBKR_GATEWAY_URL: text('https://localhost:5000/v1/api', 'IBKR Client Portal Gateway.'),
  IBKR_TLS_VERIFY: oneOf(BOOLEAN_WORDS, "Verify the gateway's certificate (it is self-signed).", 'false'),
  IBKR_REQUESTS_PER_SECOND: int(8, 1, 9, 'Our pacing of the IBKR gateway, a margin under its 10 a second.'),
  BROKER_ALLOW_FROM: text(
    'loopback,private',
    'Networks whose callers may read broker accounts, positions and quotes: CIDRs, addresses, loopback, private, or none.',
  ),
  BROKER_TOKEN: Type.Optional(
    Type.String({ minLength: 16, description: 'Authorization: Bearer <token> admits a broker caller from anywhere.', [SECRET]: true }),
  ),
  BROKER_CORS_ORIGINS: optional(
    'Web origins granted CORS on broker routes (scheme://host[:port], port * for any). Default: loopback origins on any port.',
  ),
  TASTYTRADE_URL: text('https://api.tastyworks.com', 'Tastytrade Open API.'),
  TASTYTRADE_CLIENT_SECRET: secret('Tastytrade OAuth client secret.'),
  TASTYTRADE_REFRESH_TOKEN: secret('Tastytrade OAuth refresh token.'),
  HTTPS_PROXY: secret(
    'Outbound proxy for https:// and wss:// upstreams (also read as https_proxy, which wins): http://[user:password@]host:port. Unset: HTTP_PROXY.',
  ),
  HTTP_PROXY: secret(
    'Outbound proxy for http:// and ws:// upstreams, and https:// ones when HTTPS_PROXY is unset (also read as http_proxy).',
  ),
  NO_PROXY: optional(
    'Upstreams reached directly, not through the proxy (also read as no_proxy): hosts and domains (example.com covers its subdomains), host:port, addresses, CIDRs, or *.',
  ),
  PROXY_ALSO_FOR: optional(
    "Loopback hosts and the IBKR gateway's host, always reached directly, that go through the proxy all the same: the same forms as NO_PROXY.",
  ),
  REDIS_URL: secret(
    'Shared cache, budgets, locks and limits across replicas: one Redis or Valkey node (redis:// or rediss://, with a password).',
  ),
  REDIS_CLUSTER_NODES: optional('Seed nodes host:port,... of a Redis or Valkey Cluster (instead of REDIS_URL).'),
  REDIS_SENTINELS: optional('Sentinel addresses host:port,... (instead of REDIS_URL), with REDIS_SENTINEL_NAME.'),
  REDIS_SENTINEL_NAME: optional('The name under which the Sentinels monitor the primary.'),
  REDIS_SENTINEL_PASSWORD: secret('The password of the Sentinels themselves, if they require one.'),
  REDIS_USERNAME: optional('ACL user on the Cluster or Sentinel-managed nodes (REDIS_URL carries its own).'),
  REDIS_PASSWORD: secret('Password on the Cluster or Sentinel-managed nodes (REDIS_URL carries its own).'),
  REDIS_TLS: oneOf(BOOLEAN_WORDS, 'TLS to the Cluster or Sentinel-managed nodes (REDIS_URL says rediss://).', 'false'),
  REDIS_KEY_PREFIX: text('mdp:', 'Prefix of every Redis key.'),
  METRICS_PORT: Type.Union([Type.Literal('off'), Type.Integer({ minimum: 0, maximum: 65_535 })], {
    default: 9464,
    description: 'The /metrics listener (off: none; 0: any free port).',
  }),
  METRICS_HOST: text('127.0.0.1', 'The /metrics listener address.'),
  METRICS_TOKEN: Type.Optional(
    Type.String({ minLength: 16, description: '/metrics on the public port too, to Authorization: Bearer <token>.', [SECRET]: true }),
  ),
  CURSOR_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'HMAC key of the dividends paging cursors.', [SECRET]: true })),
  STATE_DIR: text('./data', 'Embedded persistence (budget ledger, last good values).'),
  CACHE_MAX_ENTRIES: int(10_000, 10, Number.MAX_SAFE_INTEGER, 'Entries of the in-process cache.'),
  CACHE_MAX_BYTES: int(67_108_864, 1_024, Number.MAX_SAFE_INTEGER, 'Bytes of the in-process cache.'),
  ...cacheWindowVariables,
  ...avFamilyVariables,
  STREAM_HEARTBEAT_SECONDS: int(15, 1, 60, 'Comment heartbeat on /api/stream.'),
  STREAM_MAX_CONNECTIONS: int(10_000, 1, 1_000_000, 'Open streams per server.'),
  STREAM_MAX_PER_CLIENT: int(20, 0, 1_000_000, 'Open streams per client address (0 = no limit).'),
});

/** The names in EnvSchema; the credentials among them decide the default DATA_MODE. */
export const VARIABLES: readonly string[] = Object.keys(EnvSchema.properties);
export const CREDENTIALS = ['ALPHA_VANTAGE_API_KEY', 'MASSIVE_API_KEY', 'TASTYTRADE_CLIENT_SECRET', 'TASTYTRADE_REFRESH_TOKEN'] as const;
