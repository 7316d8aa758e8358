// Every environment variable the service reads, with its type, range, default and meaning: the one
// source that config.ts validates against (env-schema, TypeBox), that docs/reference/configuration.md is
// generated from (`npm run docs:generate`) and that .env.example is checked against
// (test/core/config-schema.test.ts). Defaults that depend on other variables (DATA_MODE, LOG_FORMAT,
// QUOTE_FALLBACK) are worked out in config.ts and say so here. A description is the reference's text: say
// what the setting does for the person deploying, and what happens at its limits.
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

/** What each cache window holds, for the configuration reference. */
const CACHED_ANSWERS: Record<CacheWindowName, string> = {
  QUOTE: 'quotes (provider A, or the Yahoo fallback)',
  TECHNICAL_DAILY: 'daily, weekly and monthly indicators',
  TECHNICAL_INTRADAY: 'intraday indicators',
  SEARCH: 'symbol search answers',
  SERIES_DAILY: 'daily, weekly and monthly price series',
  SERIES_INTRADAY: 'intraday price series',
  OVERVIEW: 'the market overview',
  DIVIDENDS: 'dividends pages',
  BROKER_QUOTES: 'broker quote snapshots',
  BROKER_ACCOUNTS: 'broker account lists',
  BROKER_POSITIONS: 'broker positions',
};

const YEAR_SECONDS = 31_536_000;
const cacheWindowVariables: Record<string, TSchema> = Object.fromEntries(
  Object.entries(CACHE_WINDOWS).flatMap(([name, { fresh, stale }]) => [
    [`CACHE_${name}_FRESH_SECONDS`, int(fresh, 0, YEAR_SECONDS, `How long ${CACHED_ANSWERS[name as CacheWindowName]} stay fresh.`)],
    [
      `CACHE_${name}_STALE_SECONDS`,
      int(stale, 0, YEAR_SECONDS, `How long after that ${CACHED_ANSWERS[name as CacheWindowName]} may still be served stale.`),
    ],
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
  PORT: int(3000, 0, 65_535, 'Port of the API and the dashboard.'),
  HOST: text(
    '127.0.0.1',
    'Listen address. The default keeps the service to this machine; `0.0.0.0` (the container image sets it) listens on every interface, where BROKER_ALLOW_FROM and BROKER_TOKEN decide who reads broker data.',
  ),
  TLS_CERT_FILE: optional('PEM certificate (chain). With TLS_KEY_FILE the service serves HTTPS; set both or neither.'),
  TLS_KEY_FILE: optional('PEM private key. With TLS_CERT_FILE the service serves HTTPS; set both or neither.'),
  CORS_ORIGINS: text(
    '*',
    'Web origins whose pages may read market data: `*` for any, or a comma list of origins (strict when set). Broker data has its own list, BROKER_CORS_ORIGINS.',
  ),
  DATA_MODE: oneOf(
    ['sandbox', 'live'] as const,
    '`sandbox`: built-in simulated upstreams on loopback, no keys, no network. `live`: the real providers; one without its credential answers `503 PROVIDER_NOT_CONFIGURED`, never simulated data. Default: `live` when any provider credential is set, else `sandbox`.',
  ),
  LOG_LEVEL: oneOf(
    LOG_LEVELS,
    'Log level. Upstream calls are logged at `debug`; `warn` drops the one line per request (the faster choice where a proxy in front keeps access logs).',
    'info',
  ),
  LOG_FORMAT: oneOf(
    ['json', 'pretty'] as const,
    '`json`: one object a line, for log collectors; `pretty`: readable lines (pino-pretty). Secrets are scrubbed from both. Default: `pretty` on a terminal, `json` otherwise.',
  ),
  TRUST_PROXY: text(
    'false',
    "Honour `X-Forwarded-For` only from these proxies: a comma list of addresses/CIDRs (set it to your proxy's address), `true`, or a hop count. Callers are then judged (per-caller limit, stream caps, broker access) by the address the proxy saw. Only a list of addresses lets broker data through a proxy. `true` believes the first address in the header, which any caller writes itself, so every caller can choose its own address: the start warns, and refuses it when HOST is not loopback unless TRUST_PROXY_ANY=yes. A hop count is refused off loopback the same way: a caller reaching the service directly writes the header the hops are counted in.",
  ),
  TRUST_PROXY_ANY: oneOf(
    BOOLEAN_WORDS,
    "`yes` lets TRUST_PROXY believe a peer it does not name (`true`, a hop count) while HOST is not loopback, where any caller can then choose its own address for the per-caller limit and the stream caps. Without it such a start is refused: name the proxy's address in TRUST_PROXY instead, or say `yes` only where nothing but that proxy can reach the service.",
    'no',
  ),
  RATE_LIMIT_PER_MINUTE: count(
    600,
    'Requests per client address per minute (`0` = off), shared by the replicas through Redis; beyond it `429 RATE_LIMITED` with `Retry-After`.',
  ),
  BUDGET_RESERVE: Type.Number({
    default: 0.25,
    minimum: 0,
    maximum: 0.5,
    description:
      'The part of every provider budget window (minute, day) kept for callers that have spent less than their fair share of it: one caller alone may use the rest (at least three quarters by default), so a newcomer still gets fresh data while another floods. A caller over its share gets cached and stale answers, and `429 CALLER_SHARE_SPENT` where only a new call would do. Rounded down per window (a quarter of 5 a minute keeps 1). `0` turns fair shares off.',
  }),
  CLIENT_KEYS: Type.Optional(
    Type.String({
      description:
        "Callers with a key of their own, sent as `Authorization: Bearer <key>`: one per line (or separated by `;`), `name sha256=<the key's SHA-256 in hex> [share=<weight, default 1>] [scopes=market,broker,mcp (default market)] [rate=<requests a minute, default RATE_LIMIT_PER_MINUTE>]`. A keyed caller has its own share of every provider budget and its own rate limit, and is named in logs and metrics; `broker` reads broker data from any network. A wrong key is `401`; no key is the anonymous caller of its address. Only hashes are configured (`npm run client-key -- <name>` makes a key and its line).",
      [SECRET]: true,
    }),
  ),
  CLIENT_KEYS_FILE: optional('Instead of CLIENT_KEYS: a file holding its entries, one a line (`#` starts a comment), read at start.'),
  UPSTREAM_TIMEOUT_MS: int(8_000, 100, 120_000, 'Deadline of one upstream call; past it, a stale value or `504 UPSTREAM_TIMEOUT`.'),
  HEADERS_TIMEOUT_MS: int(
    10_000,
    100,
    120_000,
    'A client must send its request line and headers within this (at most REQUEST_TIMEOUT_MS), else `408 REQUEST_TIMEOUT` and the connection is closed.',
  ),
  REQUEST_TIMEOUT_MS: int(30_000, 100, 600_000, 'A client must send its whole request within this, else `408 REQUEST_TIMEOUT`.'),
  KEEP_ALIVE_TIMEOUT_MS: int(72_000, 100, 600_000, 'Idle keep-alive connections close after this.'),
  ALPHA_VANTAGE_API_KEY: secret('Provider A (Alpha Vantage) API key. Never logged, never shown.'),
  ALPHA_VANTAGE_URL: text('https://www.alphavantage.co/query', 'Provider A endpoint.'),
  ALPHA_VANTAGE_CALLS_PER_MINUTE: count(5, 'Provider A calls per minute (`0` = no cap), shared by the replicas through Redis.'),
  ALPHA_VANTAGE_CALLS_PER_DAY: count(
    500,
    "Provider A calls per rolling 24 hours (`0` = no cap). Today's free key allows 25 a day: set `25` on one.",
  ),
  ALPHA_VANTAGE_MIN_INTERVAL_MS: int(
    1_200,
    0,
    60_000,
    'Minimum spacing of provider A calls: the provider allows 1 a second, the slack absorbs network jitter. Callers wait for a slot, up to 3 s. Default 1500 when its calls go through an outbound proxy: a new tunnel delays the first call of a burst.',
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
  MASSIVE_API_KEY: secret('Provider B (Massive, formerly Polygon.io) API key. Never logged, never shown.'),
  MASSIVE_URL: text('https://api.massive.com', 'Provider B endpoint.'),
  MASSIVE_CALLS_PER_MINUTE: count(5, 'Provider B calls per minute (`0` = no cap).'),
  OVERVIEW_SOURCE: oneOf(
    ['yahoo', 'none'] as const,
    "Market overview source: `yahoo` (Yahoo Finance's chart API, no key), or `none` to switch the overview off (`503`) where Yahoo's terms forbid redistribution.",
    'yahoo',
  ),
  YAHOO_URL: text('https://query1.finance.yahoo.com', "Yahoo's chart API."),
  OVERVIEW_SYMBOLS: text(
    DEFAULT_OVERVIEW_SYMBOLS.join(','),
    "Comma list of the overview's instruments, in Yahoo's symbols: by default the main US indices, the VIX, gold, silver, oil, bitcoin and ether.",
  ),
  OVERVIEW_CONCURRENCY: int(4, 1, 32, 'Overview instruments fetched at once.'),
  YAHOO_CALLS_PER_MINUTE: count(
    60,
    'Budget of all Yahoo calls: the overview, the quote fallback and the stored bars (`0` = no cap), shared by the replicas through Redis. Yahoo publishes no limit and throttles heavy users (unverified reports: about 2,000 calls an hour).',
  ),
  QUOTE_FALLBACK: oneOf(
    ['yahoo', 'none'] as const,
    "`yahoo`: quotes provider A cannot answer (budget spent, refused, failed, no key) come from Yahoo's chart API, with `X-Data-Source: yahoo`, and indicators may be computed from Yahoo's bars (TECHNICAL_SOURCE). `none`: provider A only, no Yahoo data for quotes and indicators. Default: `yahoo`; `none` when OVERVIEW_SOURCE is `none`.",
  ),
  TECHNICAL_SOURCE: oneOf(
    TECHNICAL_SOURCES,
    "Where indicators come from: `auto` (computed from Yahoo's bars where they give provider A's own values, provider A for the rest), `provider` (provider A, computed when it cannot answer) or `computed` (never provider A; needs QUOTE_FALLBACK `yahoo`).",
    'auto',
  ),
  BROKER: oneOf(
    ['ibkr', 'tastytrade', 'none'] as const,
    'The broker behind `/api/broker` and the `brokerQuotes` stream topic: `ibkr` (the Client Portal Gateway), `tastytrade`, or `none` (`503 PROVIDER_NOT_CONFIGURED`).',
    'ibkr',
  ),
  BROKER_STREAMING: oneOf(
    ['auto', 'off'] as const,
    "`auto`: broker quotes from the broker's own real-time feed (IBKR's websocket, Tastytrade's DXLink), one upstream connection for the whole deployment; `off`: snapshots only.",
    'auto',
  ),
  IBKR_GATEWAY_URL: text('https://localhost:5000/v1/api', "The IBKR Client Portal Gateway's API."),
  IBKR_TLS_VERIFY: oneOf(
    BOOLEAN_WORDS,
    "Verify the gateway's certificate. The gateway's own is self-signed, so by default it is accepted, for that host only.",
    'false',
  ),
  IBKR_REQUESTS_PER_SECOND: int(
    8,
    1,
    9,
    'Our pacing of the IBKR gateway: it allows 10 requests in any second and puts violators in a penalty box, so calls keep a margin and are spaced `1000/n` ms apart, shared by the replicas through Redis.',
  ),
  BROKER_ALLOW_FROM: text(
    'loopback,private',
    'Networks whose callers may read broker accounts, positions and quotes (routes and stream topics): CIDRs, addresses, `loopback` (`127.0.0.0/8`, `::1`), `private` (`10/8`, `172.16/12`, `192.168/16`, `fc00::/7`), or `none`; judged on the address TRUST_PROXY lets the service believe.',
  ),
  BROKER_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description:
        '`Authorization: Bearer <token>` admits a broker caller from anywhere; a wrong token is `401`. Compared in constant time, never logged.',
      [SECRET]: true,
    }),
  ),
  BROKER_CORS_ORIGINS: optional(
    "Web origins whose pages may read broker data, besides the service's own (`scheme://host[:port]`, port `*` for any; never `*`). Default: loopback origins on any port.",
  ),
  TASTYTRADE_URL: text('https://api.tastyworks.com', 'Tastytrade Open API.'),
  TASTYTRADE_CLIENT_SECRET: secret("Your Tastytrade OAuth application's client secret."),
  TASTYTRADE_REFRESH_TOKEN: secret('A refresh token granted to that application; access tokens are refreshed from it ahead of expiry.'),
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
    'One Redis or Valkey node that every replica shares (cache, budgets, locks, per-caller limits, stream leases): `redis://`, or `rediss://` for TLS, with `user:password@` for a managed service. Unset: the embedded store under STATE_DIR.',
  ),
  REDIS_CLUSTER_NODES: optional(
    'Instead of REDIS_URL: seed nodes `host:port,…` of a Redis or Valkey Cluster (ElastiCache or MemoryDB cluster mode, Redis Enterprise OSS Cluster API); the rest are discovered.',
  ),
  REDIS_SENTINELS: optional('Instead of REDIS_URL: Sentinel addresses `host:port,…`, with REDIS_SENTINEL_NAME.'),
  REDIS_SENTINEL_NAME: optional('The name under which the Sentinels monitor the primary.'),
  REDIS_SENTINEL_PASSWORD: secret('The password of the Sentinels themselves, if they require one.'),
  REDIS_USERNAME: optional('ACL user on the Cluster or Sentinel-managed nodes (REDIS_URL carries its own).'),
  REDIS_PASSWORD: secret('Password on the Cluster or Sentinel-managed nodes (REDIS_URL carries its own).'),
  REDIS_TLS: oneOf(
    BOOLEAN_WORDS,
    'TLS to the Cluster or Sentinel-managed nodes (REDIS_URL says `rediss://`). With TLS, Cluster nodes are reached by the names the Cluster announces, so certificates match.',
    'false',
  ),
  REDIS_KEY_PREFIX: text('mdp:', 'Prefix of every Redis key; no `{` or `}`, which would move keys out of their Cluster slot.'),
  MCP: oneOf(
    BOOLEAN_WORDS,
    'The MCP server for AI agents at `/mcp` (Streamable HTTP, stateless): the same cache, budgets and broker rules as the REST routes. `off` (or `false`, `no`, `0`): no `/mcp` route.',
    'on',
  ),
  MCP_ORIGINS: optional(
    "Web origins whose pages may use `/mcp`, besides the service's own and loopback pages (`scheme://host[:port]`, port `*` for any; never `*`, and CORS_ORIGINS does not apply to `/mcp`). A host named here is also a name `/mcp` may be reached by without MCP_TOKEN.",
  ),
  MCP_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description:
        'When set, every `/mcp` request must send `Authorization: Bearer <token>` (BROKER_TOKEN is accepted too); a missing or wrong one is `401`. Compared in constant time, never logged. Unset: `/mcp` is open to whoever reaches it by an address, a `localhost` name or a host of MCP_ORIGINS.',
      [SECRET]: true,
    }),
  ),
  MCP_MAX_RESULT_BYTES: int(
    32_768,
    4_096,
    1_048_576,
    'The largest tool result `/mcp` answers, in bytes of JSON: a longer one is cut to whole rows and says how many were left out and how to ask for the rest.',
  ),
  METRICS_PORT: Type.Union([Type.Literal('off'), Type.Integer({ minimum: 0, maximum: 65_535 })], {
    default: 9464,
    description:
      'The `/metrics` listener, apart from the API (`off`: none; `0`: any free port). When the default port is taken (a second instance on the host) the service warns and starts without it; a port that was set and is taken stops the start.',
  }),
  METRICS_HOST: text('127.0.0.1', 'The `/metrics` listener address (in a container `0.0.0.0`, with the port kept off the public network).'),
  METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description: '`/metrics` on the public port too, to `Authorization: Bearer <token>`; the metrics listener then asks for it as well.',
      [SECRET]: true,
    }),
  ),
  CURSOR_SECRET: Type.Optional(
    Type.String({
      minLength: 32,
      description:
        'HMAC key of the dividends paging cursors, the same on every replica. Unset: a random key made once and shared through Redis, or, without Redis, kept per process (cursors then end with a restart).',
      [SECRET]: true,
    }),
  ),
  STATE_DIR: text(
    './data',
    'Embedded persistence (SQLite): the budget ledger and the last good values, which survive a restart. A directory that cannot be created stops the start.',
  ),
  CACHE_MAX_ENTRIES: int(10_000, 10, Number.MAX_SAFE_INTEGER, 'Entries of the in-process cache.'),
  CACHE_MAX_BYTES: int(67_108_864, 1_024, Number.MAX_SAFE_INTEGER, 'Bytes of the in-process cache.'),
  ...cacheWindowVariables,
  ...avFamilyVariables,
  CACHE_NOT_FOUND_SECONDS: int(
    3_600,
    0,
    YEAR_SECONDS,
    'How long a provider\'s "no data for this symbol" (Alpha Vantage\'s "Invalid API call" or empty quote, Yahoo\'s 404) is remembered, in every replica, and answered again with no call. Never a limit or a failure. `0`: off.',
  ),
  STREAM_HEARTBEAT_SECONDS: int(15, 1, 60, 'Comment heartbeat on `/api/stream`; a viewer blocked for two periods is disconnected.'),
  STREAM_MAX_CONNECTIONS: int(10_000, 1, 1_000_000, 'Open streams per server; beyond it `429 RATE_LIMITED`.'),
  STREAM_MAX_PER_CLIENT: int(20, 0, 1_000_000, 'Open streams per client address (`0` = no limit); beyond it `429 RATE_LIMITED`.'),
});

/** The names in EnvSchema; the credentials among them decide the default DATA_MODE. */
export const VARIABLES: readonly string[] = Object.keys(EnvSchema.properties);
export const CREDENTIALS = ['ALPHA_VANTAGE_API_KEY', 'MASSIVE_API_KEY', 'TASTYTRADE_CLIENT_SECRET', 'TASTYTRADE_REFRESH_TOKEN'] as const;
