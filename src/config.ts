// Reads and validates the environment once. The variable names are the public contract (README, .env.example).
import { existsSync } from 'node:fs';

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
export interface CacheWindow {
  freshMs: number;
  staleMs: number;
}

export const DEFAULT_OVERVIEW_SYMBOLS = ['^GSPC', '^DJI', '^IXIC', '^RUT', '^VIX', 'GC=F', 'SI=F', 'CL=F', 'BTC-USD', 'ETH-USD'];

export type DataMode = 'sandbox' | 'live';
export const OVERVIEW_SOURCE_NAMES = ['yahoo', 'none'] as const;
export type OverviewSourceName = (typeof OVERVIEW_SOURCE_NAMES)[number];
export type BrokerKind = 'ibkr' | 'tastytrade' | 'none';
export const QUOTE_FALLBACKS = ['yahoo', 'none'] as const;
export type QuoteFallback = (typeof QUOTE_FALLBACKS)[number];

export interface Config {
  port: number;
  host: string;
  tls: { certFile: string; keyFile: string } | undefined;
  corsOrigins: '*' | string[];
  mode: DataMode;
  logLevel: string;
  /** `pretty` for people at a terminal, `json` (one object a line) for log collectors. */
  logFormat: 'json' | 'pretty';
  /** Fastify's `trustProxy`: false, true, a hop count, or a comma list of addresses/CIDRs. */
  trustProxy: boolean | number | string;
  rateLimitPerMinute: number;
  upstreamTimeoutMs: number;
  /** Limits on slow clients: headers must arrive within headersTimeoutMs, the whole request within requestTimeoutMs. */
  server: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  alphaVantage: { url: string; apiKey: string | undefined; callsPerMinute: number; callsPerDay: number; minIntervalMs: number };
  massive: { url: string; apiKey: string | undefined; callsPerMinute: number };
  /** `none` turns the overview off (e.g. where Yahoo's terms forbid redistribution). */
  overview: { source: OverviewSourceName; url: string; symbols: string[]; concurrency: number };
  /**
   * Yahoo's chart API (YAHOO_URL, in `overview.url`) serves the overview and the quote and indicator
   * fallback; one budget covers every call to it. `quoteFallback` `none` keeps provider A's answers only.
   */
  yahoo: { callsPerMinute: number; quoteFallback: QuoteFallback };
  broker: {
    kind: BrokerKind;
    /** requestsPerSecond: our pacing, below the gateway's 10 a second. */
    ibkr: { url: string; tlsVerify: boolean; requestsPerSecond: number };
    tastytrade: { url: string; clientSecret: string | undefined; refreshToken: string | undefined };
  };
  redis: { url: string | undefined; keyPrefix: string };
  /** Prometheus text: on its own listener (port undefined: none), and on the public port only with a token.
   * portExplicit: METRICS_PORT was set; only then is a taken port a start failure (else skipped: server.ts). */
  metrics: { port: number | undefined; host: string; token: string | undefined; portExplicit: boolean };
  /** HMAC key of paging cursors; unset: one generated and shared through Redis (or per process without it). */
  cursorSecret: string | undefined;
  stateDir: string;
  cache: { maxEntries: number; maxBytes: number; windows: Record<CacheWindowName, CacheWindow> };
  /** Server-Sent Events (/api/stream): heartbeat period and connection limits (0 = no per-address limit). */
  stream: { heartbeatSeconds: number; maxConnections: number; maxPerClient: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Collects every problem instead of stopping at the first, so one start shows them all. */
class EnvReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || n < min || n > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return n;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
    return fallback;
  }

  url(name: string, fallback: string, protocols = ['http:', 'https:']): string {
    const value = this.raw(name) ?? fallback;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name} must be a ${protocols.join(' or ')} URL (got "${value}")`);
      return fallback;
    }
  }

  list(name: string, fallback: string[]): string[] {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    return value.split(',').map((s) => s.trim()).filter(Boolean);
  }
}

function readTrustProxy(r: EnvReader): boolean | number | string {
  const value = r.raw('TRUST_PROXY');
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

function readCacheWindows(r: EnvReader): Record<CacheWindowName, CacheWindow> {
  const windows = {} as Record<CacheWindowName, CacheWindow>;
  for (const [name, d] of Object.entries(CACHE_WINDOWS) as [CacheWindowName, { fresh: number; stale: number }][]) {
    windows[name] = {
      freshMs: r.int(`CACHE_${name}_FRESH_SECONDS`, d.fresh, 0, 31_536_000) * 1000,
      staleMs: r.int(`CACHE_${name}_STALE_SECONDS`, d.stale, 0, 31_536_000) * 1000,
    };
  }
  return windows;
}

/** 9464: the port Prometheus' registry of exporter ports gives to the OpenTelemetry/Node.js exporters. */
function readMetrics(r: EnvReader): Config['metrics'] {
  const off = r.raw('METRICS_PORT')?.toLowerCase() === 'off';
  const token = r.raw('METRICS_TOKEN');
  if (token !== undefined && token.length < 16) r.problems.push('METRICS_TOKEN must be at least 16 characters');
  const portExplicit = r.raw('METRICS_PORT') !== undefined;
  return { port: off ? undefined : r.int('METRICS_PORT', 9464, 0, 65_535), host: r.string('METRICS_HOST', '127.0.0.1'), token, portExplicit };
}

/** 32 characters of random text carry at least 128 bits even as hex. */
const MIN_CURSOR_SECRET_LENGTH = 32;
const SYMBOL_PATTERN = /^[A-Za-z0-9.^=\-/]{1,20}$/;

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const credentials = ['ALPHA_VANTAGE_API_KEY', 'MASSIVE_API_KEY', 'TASTYTRADE_CLIENT_SECRET', 'TASTYTRADE_REFRESH_TOKEN'];
  const defaultMode: DataMode = credentials.some((name) => r.raw(name) !== undefined) ? 'live' : 'sandbox';

  const certFile = r.raw('TLS_CERT_FILE');
  const keyFile = r.raw('TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    r.problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  for (const [name, file] of [['TLS_CERT_FILE', certFile], ['TLS_KEY_FILE', keyFile]] as const) {
    if (file !== undefined && !existsSync(file)) r.problems.push(`${name} points to a missing file (${file})`);
  }

  const corsList = r.list('CORS_ORIGINS', ['*']);
  const overviewSymbols = r.list('OVERVIEW_SYMBOLS', DEFAULT_OVERVIEW_SYMBOLS);
  const badSymbols = overviewSymbols.filter((s) => !SYMBOL_PATTERN.test(s));
  if (badSymbols.length > 0) r.problems.push(`OVERVIEW_SYMBOLS holds invalid symbols: ${badSymbols.join(', ')}`);

  const config: Config = {
    port: r.int('PORT', 3000, 0, 65_535),
    host: r.string('HOST', '127.0.0.1'),
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    corsOrigins: corsList.includes('*') ? '*' : corsList,
    mode: r.oneOf('DATA_MODE', ['sandbox', 'live'] as const, defaultMode),
    logLevel: r.oneOf('LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    logFormat: r.oneOf('LOG_FORMAT', ['json', 'pretty'] as const, process.stdout.isTTY ? 'pretty' : 'json'),
    trustProxy: readTrustProxy(r),
    rateLimitPerMinute: r.int('RATE_LIMIT_PER_MINUTE', 600, 0),
    upstreamTimeoutMs: r.int('UPSTREAM_TIMEOUT_MS', 8_000, 100, 120_000),
    server: {
      headersTimeoutMs: r.int('HEADERS_TIMEOUT_MS', 10_000, 100, 120_000),
      requestTimeoutMs: r.int('REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
      keepAliveTimeoutMs: r.int('KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
    },
    alphaVantage: {
      url: r.url('ALPHA_VANTAGE_URL', 'https://www.alphavantage.co/query'),
      apiKey: r.raw('ALPHA_VANTAGE_API_KEY'),
      callsPerMinute: r.int('ALPHA_VANTAGE_CALLS_PER_MINUTE', 5, 0),
      callsPerDay: r.int('ALPHA_VANTAGE_CALLS_PER_DAY', 500, 0),
      // 1 call/s is the provider's rule; 200 ms of slack absorbs arrival jitter (a cold connection vs a reused one).
      minIntervalMs: r.int('ALPHA_VANTAGE_MIN_INTERVAL_MS', 1_200, 0, 60_000),
    },
    massive: {
      url: r.url('MASSIVE_URL', 'https://api.massive.com'),
      apiKey: r.raw('MASSIVE_API_KEY'),
      callsPerMinute: r.int('MASSIVE_CALLS_PER_MINUTE', 5, 0),
    },
    overview: {
      source: r.oneOf('OVERVIEW_SOURCE', OVERVIEW_SOURCE_NAMES, 'yahoo'),
      url: r.url('YAHOO_URL', 'https://query1.finance.yahoo.com'),
      symbols: overviewSymbols,
      concurrency: r.int('OVERVIEW_CONCURRENCY', 4, 1, 32),
    },
    yahoo: {
      // Yahoo publishes no limit and throttles heavy users (unverified reports: a burst limit and about
      // 2,000 calls an hour). The cache keeps the sustained rate at one call per symbol per fresh window;
      // 60 a minute lets a dashboard's first burst of cold symbols through.
      callsPerMinute: r.int('YAHOO_CALLS_PER_MINUTE', 60, 0),
      quoteFallback: r.oneOf('QUOTE_FALLBACK', QUOTE_FALLBACKS, r.raw('OVERVIEW_SOURCE') === 'none' ? 'none' : 'yahoo'),
    },
    broker: {
      kind: r.oneOf('BROKER', ['ibkr', 'tastytrade', 'none'] as const, 'ibkr'),
      ibkr: {
        url: r.url('IBKR_GATEWAY_URL', 'https://localhost:5000/v1/api'),
        tlsVerify: r.bool('IBKR_TLS_VERIFY', false),
        // The gateway allows 10 in any second and sends violators to a penalty box: 10 is no margin at all.
        requestsPerSecond: r.int('IBKR_REQUESTS_PER_SECOND', 8, 1, 9),
      },
      tastytrade: {
        url: r.url('TASTYTRADE_URL', 'https://api.tastyworks.com'),
        clientSecret: r.raw('TASTYTRADE_CLIENT_SECRET'),
        refreshToken: r.raw('TASTYTRADE_REFRESH_TOKEN'),
      },
    },
    redis: { url: r.raw('REDIS_URL'), keyPrefix: r.string('REDIS_KEY_PREFIX', 'mdp:') },
    metrics: readMetrics(r),
    cursorSecret: r.raw('CURSOR_SECRET'),
    stateDir: r.string('STATE_DIR', './data'),
    cache: {
      maxEntries: r.int('CACHE_MAX_ENTRIES', 10_000, 10),
      maxBytes: r.int('CACHE_MAX_BYTES', 64 * 1024 * 1024, 1024),
      windows: readCacheWindows(r),
    },
    stream: {
      // Below the idle-socket timeout, so a quiet stream is never cut by the server itself.
      heartbeatSeconds: r.int('STREAM_HEARTBEAT_SECONDS', 15, 1, 60),
      maxConnections: r.int('STREAM_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
      maxPerClient: r.int('STREAM_MAX_PER_CLIENT', 20, 0, 1_000_000),
    },
  };

  if (config.cursorSecret !== undefined && config.cursorSecret.length < MIN_CURSOR_SECRET_LENGTH) {
    r.problems.push(`CURSOR_SECRET must be at least ${MIN_CURSOR_SECRET_LENGTH} characters (got ${config.cursorSecret.length})`);
  }
  if (config.server.headersTimeoutMs > config.server.requestTimeoutMs) r.problems.push('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS');
  const redisUrl = config.redis.url;
  if (redisUrl !== undefined) r.url('REDIS_URL', redisUrl, ['redis:', 'rediss:']);
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}
