// Reads and validates the environment once, against the schema of every variable (config-schema.ts):
// types, ranges, enums and defaults there; URLs, lists and rules that tie variables together here. An
// invalid start names every problem, one line each, and never echoes a secret.
import { existsSync, readFileSync } from 'node:fs';
import { envSchema } from 'env-schema';
import type { Static } from '@sinclair/typebox';
import {
  AV_FAMILIES,
  type AvFamily,
  CACHE_WINDOWS,
  type CacheWindowName,
  CREDENTIALS,
  EnvSchema,
  SECRET,
  type TECHNICAL_SOURCES,
  VARIABLES,
} from './config-schema.js';
import type { ClientKey } from './caller.js';
import { parseClientKeys } from './client-keys.js';
import { isLoopbackHost, networkMatcher, proxyTrust, trustProxyRisk } from './networks.js';
import { type ProxySettings, proxySettings } from './proxy-settings.js';
import { gatewayHosts, OutboundRoutes } from './outbound-routes.js';
import { LOOPBACK_ORIGINS, parseOrigins } from './web-origins.js';

/** How long an answer is fresh, then how long after that it may still be served stale. */
export interface CacheWindow {
  freshMs: number;
  staleMs: number;
}

export type DataMode = 'sandbox' | 'live';
const OVERVIEW_SOURCE_NAMES = ['yahoo', 'none'] as const;
type OverviewSourceName = (typeof OVERVIEW_SOURCE_NAMES)[number];
export type BrokerKind = 'ibkr' | 'tastytrade' | 'none';
const QUOTE_FALLBACKS = ['yahoo', 'none'] as const;
type QuoteFallback = (typeof QUOTE_FALLBACKS)[number];
export type TechnicalSource = (typeof TECHNICAL_SOURCES)[number];
/** Alpha Vantage's `entitlement` parameter: the plan's US market data. */
export type AlphaVantageEntitlement = 'delayed' | 'realtime';

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
  /** Callers with keys of their own (CLIENT_KEYS or CLIENT_KEYS_FILE); empty: every caller is known by its address. */
  clientKeys: ClientKey[];
  /** The part of each budget window kept for callers below their fair share (BUDGET_RESERVE; 0: no fair shares). */
  budgetReserve: number;
  upstreamTimeoutMs: number;
  /** Limits on slow clients: headers must arrive within headersTimeoutMs, the whole request within requestTimeoutMs. */
  server: { headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number };
  alphaVantage: {
    url: string;
    apiKey: string | undefined;
    callsPerMinute: number;
    callsPerDay: number;
    minIntervalMs: number;
    /** free: premium functions are answered with Alpha Vantage's premium notice, never asked. */
    plan: 'free' | 'premium';
    /** ALPHA_VANTAGE_ENTITLEMENT: the plan's US market data, undefined for the free plan's end-of-day data. */
    entitlement: AlphaVantageEntitlement | undefined;
  };
  massive: { url: string; apiKey: string | undefined; callsPerMinute: number };
  /** `none` turns the overview off (e.g. where Yahoo's terms forbid redistribution). */
  overview: { source: OverviewSourceName; url: string; symbols: string[]; concurrency: number };
  /**
   * Yahoo's chart API (YAHOO_URL, in `overview.url`) serves the overview and the quote and indicator
   * fallback; one budget covers every call to it. `quoteFallback` `none` keeps provider A's answers only.
   */
  yahoo: { callsPerMinute: number; quoteFallback: QuoteFallback };
  /**
   * Where indicators come from. `auto` computes them from Yahoo's bars where it can and asks provider A for
   * the rest; with quoteFallback `none` (no Yahoo data for quotes and indicators) it is provider A alone.
   */
  technical: { source: TechnicalSource };
  broker: {
    kind: BrokerKind;
    /** `auto`: quotes streamed from the broker's own real-time feed where it has one; `off`: snapshots only. */
    streaming: 'auto' | 'off';
    /** requestsPerSecond: our pacing, below the gateway's 10 a second. */
    ibkr: { url: string; tlsVerify: boolean; requestsPerSecond: number };
    tastytrade: { url: string; clientSecret: string | undefined; refreshToken: string | undefined };
    /**
     * Who may read accounts, positions and quotes: callers from `allowFrom` (CIDRs, addresses, `loopback`,
     * `private`, `none`), or with the bearer `token`; pages of `corsOrigins` (and the service's own) in a browser.
     */
    access: { allowFrom: string[]; token: string | undefined; corsOrigins: string[] };
  };
  /** The outbound proxy for upstream calls and the broker websockets (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, PROXY_ALSO_FOR). */
  proxy: ProxySettings;
  /** Where replicas share state; undefined: the embedded store. */
  redis: { target: RedisTarget | undefined; keyPrefix: string };
  /** Prometheus text: on its own listener (port undefined: none), and on the public port only with a token.
   * portExplicit: METRICS_PORT was set; only then is a taken port a start failure (else skipped: server.ts). */
  metrics: { port: number | undefined; host: string; token: string | undefined; portExplicit: boolean };
  /** HMAC key of paging cursors; unset: one generated and shared through Redis (or per process without it). */
  cursorSecret: string | undefined;
  stateDir: string;
  cache: {
    maxEntries: number;
    maxBytes: number;
    windows: Record<CacheWindowName, CacheWindow>;
    /** Forwarded Alpha Vantage functions, by family (CACHE_AV_<FAMILY>_SECONDS). */
    avFamilies: Record<AvFamily, CacheWindow>;
    /** How long a provider's "not found" is remembered (CACHE_NOT_FOUND_SECONDS); 0: not at all. */
    notFoundMs: number;
  };
  /** Server-Sent Events (/api/stream): heartbeat period and connection limits (0 = no per-address limit). */
  stream: { heartbeatSeconds: number; maxConnections: number; maxPerClient: number };
  /**
   * The MCP server at /mcp: on or off, the web origins whose pages may use it besides the service's own and
   * loopback ones, the optional bearer token, and the largest tool result in bytes.
   */
  mcp: { enabled: boolean; origins: string[]; token: string | undefined; maxResultBytes: number };
}

export interface RedisAddress {
  host: string;
  port: number;
}

/** The credentials and TLS of the data nodes a Cluster or Sentinel names (a URL carries its own). */
interface RedisNodeAuth {
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
}

export type RedisTarget =
  | { kind: 'redis'; url: string }
  | ({ kind: 'redis-cluster'; nodes: RedisAddress[] } & RedisNodeAuth)
  | ({ kind: 'redis-sentinel'; sentinels: RedisAddress[]; name: string; sentinelPassword: string | undefined } & RedisNodeAuth);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;
type Vars = Static<typeof EnvSchema>;

const SYMBOL_PATTERN = /^[A-Za-z0-9.^=\-/]{1,20}$/;
const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

export function loadConfig(env: Env = process.env): Config {
  const given = givenValues(env);
  const v = validated(given);
  const problems: string[] = [];
  const url = (name: keyof Vars & string, protocols = ['http:', 'https:']): string => {
    const value = String(v[name]);
    try {
      if (!protocols.includes(new URL(value).protocol)) throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL${isSecret(name) ? '' : ` (got "${value}")`}`);
      return value;
    }
  };
  const list = (value: string) =>
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);

  const certFile = v.TLS_CERT_FILE;
  const keyFile = v.TLS_KEY_FILE;
  if ((certFile === undefined) !== (keyFile === undefined)) problems.push('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  for (const [name, file] of [
    ['TLS_CERT_FILE', certFile],
    ['TLS_KEY_FILE', keyFile],
  ] as const) {
    if (file !== undefined && !existsSync(file)) problems.push(`${name} points to a missing file (${file})`);
  }
  const corsList = list(v.CORS_ORIGINS);
  const overviewSymbols = list(v.OVERVIEW_SYMBOLS);
  const badSymbols = overviewSymbols.filter((s) => !SYMBOL_PATTERN.test(s));
  if (badSymbols.length > 0) problems.push(`OVERVIEW_SYMBOLS holds invalid symbols: ${badSymbols.join(', ')}`);
  if (v.HEADERS_TIMEOUT_MS > v.REQUEST_TIMEOUT_MS) problems.push('HEADERS_TIMEOUT_MS must not exceed REQUEST_TIMEOUT_MS');
  if (/[{}]/.test(v.REDIS_KEY_PREFIX))
    problems.push('REDIS_KEY_PREFIX cannot contain { or }: they would move keys out of their Cluster slot');
  const proxy = proxySettings(env, problems);
  const redisTarget = redisTargetOf(v, problems, list, () => url('REDIS_URL', ['redis:', 'rediss:']));
  const allowFrom = list(v.BROKER_ALLOW_FROM);
  const brokerOrigins = v.BROKER_CORS_ORIGINS === undefined ? LOOPBACK_ORIGINS : list(v.BROKER_CORS_ORIGINS);
  checked(problems, 'BROKER_ALLOW_FROM', () => networkMatcher(allowFrom));
  if (brokerOrigins.includes('*'))
    problems.push('BROKER_CORS_ORIGINS cannot be *: list the origins of the dashboards that may read broker data');
  else checked(problems, 'BROKER_CORS_ORIGINS', () => parseOrigins(brokerOrigins));
  checked(problems, 'TRUST_PROXY', () => proxyTrust(trustProxy(v.TRUST_PROXY)));
  const clientKeys = clientKeysOf(v, problems);
  const trustRisk = trustProxyRisk(trustProxy(v.TRUST_PROXY), v.HOST);
  if (trustRisk !== undefined && !isLoopbackHost(v.HOST) && !TRUTHY.has(v.TRUST_PROXY_ANY))
    problems.push(`${trustRisk}, or TRUST_PROXY_ANY=yes if only that proxy can reach HOST=${v.HOST}`);
  const mcpOrigins = list(v.MCP_ORIGINS ?? '');
  if (mcpOrigins.includes('*')) problems.push('MCP_ORIGINS cannot be *: list the origins of the pages that may use /mcp');
  else checked(problems, 'MCP_ORIGINS', () => parseOrigins(mcpOrigins));
  const quoteFallback = v.QUOTE_FALLBACK ?? (v.OVERVIEW_SOURCE === 'none' ? 'none' : 'yahoo');
  if (v.TECHNICAL_SOURCE === 'computed' && quoteFallback === 'none')
    problems.push(
      `TECHNICAL_SOURCE=computed reads Yahoo's bars, which QUOTE_FALLBACK=none${v.QUOTE_FALLBACK === undefined ? ' (the default with OVERVIEW_SOURCE=none)' : ''} keeps out: set QUOTE_FALLBACK=yahoo, or TECHNICAL_SOURCE to auto or provider`,
    );

  const alphaVantageUrl = url('ALPHA_VANTAGE_URL');
  const minIntervalMs =
    given.ALPHA_VANTAGE_MIN_INTERVAL_MS === undefined && proxied(proxy, alphaVantageUrl, gatewayHosts(v.BROKER, v.IBKR_GATEWAY_URL))
      ? PROXIED_MIN_INTERVAL_MS
      : v.ALPHA_VANTAGE_MIN_INTERVAL_MS;

  const windows = {} as Record<CacheWindowName, CacheWindow>;
  for (const name of Object.keys(CACHE_WINDOWS) as CacheWindowName[]) {
    const seconds = (edge: 'FRESH' | 'STALE') => (v as Record<string, unknown>)[`CACHE_${name}_${edge}_SECONDS`] as number;
    windows[name] = { freshMs: seconds('FRESH') * 1000, staleMs: seconds('STALE') * 1000 };
  }
  const avFamilies = {} as Record<AvFamily, CacheWindow>;
  for (const [name, { stale }] of Object.entries(AV_FAMILIES) as [AvFamily, { stale: number }][]) {
    avFamilies[name] = { freshMs: ((v as Record<string, unknown>)[`CACHE_AV_${name}_SECONDS`] as number) * 1000, staleMs: stale * 1000 };
  }

  const config: Config = {
    port: v.PORT,
    host: v.HOST,
    tls: certFile !== undefined && keyFile !== undefined ? { certFile, keyFile } : undefined,
    corsOrigins: corsList.includes('*') ? '*' : corsList,
    mode: v.DATA_MODE ?? (CREDENTIALS.some((name) => given[name] !== undefined) ? 'live' : 'sandbox'),
    logLevel: v.LOG_LEVEL,
    logFormat: v.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    trustProxy: trustProxy(v.TRUST_PROXY),
    rateLimitPerMinute: v.RATE_LIMIT_PER_MINUTE,
    clientKeys,
    budgetReserve: v.BUDGET_RESERVE,
    upstreamTimeoutMs: v.UPSTREAM_TIMEOUT_MS,
    server: { headersTimeoutMs: v.HEADERS_TIMEOUT_MS, requestTimeoutMs: v.REQUEST_TIMEOUT_MS, keepAliveTimeoutMs: v.KEEP_ALIVE_TIMEOUT_MS },
    alphaVantage: {
      url: alphaVantageUrl,
      apiKey: v.ALPHA_VANTAGE_API_KEY,
      callsPerMinute: v.ALPHA_VANTAGE_CALLS_PER_MINUTE,
      callsPerDay: v.ALPHA_VANTAGE_CALLS_PER_DAY,
      minIntervalMs,
      plan: v.ALPHA_VANTAGE_PLAN,
      entitlement: v.ALPHA_VANTAGE_ENTITLEMENT,
    },
    massive: { url: url('MASSIVE_URL'), apiKey: v.MASSIVE_API_KEY, callsPerMinute: v.MASSIVE_CALLS_PER_MINUTE },
    overview: { source: v.OVERVIEW_SOURCE, url: url('YAHOO_URL'), symbols: overviewSymbols, concurrency: v.OVERVIEW_CONCURRENCY },
    yahoo: {
      // Yahoo publishes no limit and throttles heavy users (unverified reports: a burst limit and about
      // 2,000 calls an hour). The cache keeps the sustained rate at one call per symbol per fresh window;
      // 60 a minute lets a dashboard's first burst of cold symbols through.
      callsPerMinute: v.YAHOO_CALLS_PER_MINUTE,
      quoteFallback,
    },
    technical: { source: v.TECHNICAL_SOURCE },
    broker: {
      kind: v.BROKER,
      streaming: v.BROKER_STREAMING,
      ibkr: { url: url('IBKR_GATEWAY_URL'), tlsVerify: TRUTHY.has(v.IBKR_TLS_VERIFY), requestsPerSecond: v.IBKR_REQUESTS_PER_SECOND },
      tastytrade: { url: url('TASTYTRADE_URL'), clientSecret: v.TASTYTRADE_CLIENT_SECRET, refreshToken: v.TASTYTRADE_REFRESH_TOKEN },
      access: { allowFrom, token: v.BROKER_TOKEN, corsOrigins: brokerOrigins },
    },
    proxy,
    redis: { target: redisTarget, keyPrefix: v.REDIS_KEY_PREFIX },
    metrics: {
      port: v.METRICS_PORT === 'off' ? undefined : v.METRICS_PORT,
      host: v.METRICS_HOST,
      token: v.METRICS_TOKEN,
      // A taken port fails the start only when it was chosen (server.ts); the default one is skipped.
      portExplicit: given.METRICS_PORT !== undefined,
    },
    cursorSecret: v.CURSOR_SECRET,
    stateDir: v.STATE_DIR,
    cache: {
      maxEntries: v.CACHE_MAX_ENTRIES,
      maxBytes: v.CACHE_MAX_BYTES,
      windows,
      avFamilies,
      notFoundMs: v.CACHE_NOT_FOUND_SECONDS * 1000,
    },
    stream: {
      heartbeatSeconds: v.STREAM_HEARTBEAT_SECONDS,
      maxConnections: v.STREAM_MAX_CONNECTIONS,
      maxPerClient: v.STREAM_MAX_PER_CLIENT,
    },
    mcp: { enabled: TRUTHY.has(v.MCP), origins: mcpOrigins, token: v.MCP_TOKEN, maxResultBytes: v.MCP_MAX_RESULT_BYTES },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * Provider A's spacing when its calls go through an outbound proxy and ALPHA_VANTAGE_MIN_INTERVAL_MS is not
 * set. A call that opens a new tunnel (CONNECT, then TLS through it) reaches the provider later than the
 * next call, which reuses the tunnel: their gap at arrival is the spacing less that set-up. Measured through
 * a local proxy with a TLS-inspecting end on a loaded 2-core machine (test/upstreams/outbound-proxy.test.ts):
 * 225 to 400 ms, more than the direct default's 200 ms margin over the provider's one call a second.
 */
const PROXIED_MIN_INTERVAL_MS = 1_500;

function proxied(settings: ProxySettings, target: string, localHosts: string[]): boolean {
  try {
    return new OutboundRoutes(settings, localHosts).proxyFor(target) !== undefined;
  } catch {
    // An invalid URL or list is already a problem of its own.
    return false;
  }
}

/** Records the TypeError `parse` throws for a variable's value as that variable's problem. */
function checked(problems: string[], name: string, parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    problems.push(`${name}: ${(error as Error).message}`);
  }
}

/** The service's own variables as given: trimmed, and an empty one counts as unset. */
function givenValues(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of VARIABLES) {
    const value = env[name]?.trim();
    if (value !== undefined && value !== '') out[name] = name === 'METRICS_PORT' ? value.toLowerCase() : value;
  }
  return out;
}

/** Typed and defaulted by the schema, or every problem at once, one line per variable. */
function validated(given: Record<string, string>): Vars {
  try {
    // env-schema sets additionalProperties on the schema it is given: a copy, so the shared one stays as written.
    return envSchema<Vars>({
      schema: structuredClone(EnvSchema),
      data: { ...given },
      env: false,
      ajv: { customOptions: (ajv) => ajv.addKeyword(SECRET) },
    });
  } catch (error) {
    const failed = new Set(
      ((error as { errors?: { instancePath: string }[] }).errors ?? []).map((e) => e.instancePath.slice(1).split('/')[0] as string),
    );
    if (failed.size === 0) throw error;
    throw new ConfigError([...failed].map((name) => problem(name, given[name])));
  }
}

/** What `name` must be, in words, from its schema; a secret's value is never repeated. */
function problem(name: string, value: string | undefined): string {
  const schema = (EnvSchema.properties as Record<string, Record<string, unknown>>)[name] ?? {};
  const got = isSecret(name) || value === undefined ? '' : ` (got "${value}")`;
  return `${name} must be ${expected(schema)}${got}`;
}

function expected(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((s) => expected(s as Record<string, unknown>)).join(', or ');
  if (schema.const !== undefined) return String(schema.const);
  if (typeof schema.minLength === 'number') return `at least ${schema.minLength} characters`;
  if (schema.type === 'number') return `a number from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  if (schema.type === 'integer') {
    const { minimum, maximum } = schema as { minimum: number; maximum: number };
    return maximum >= Number.MAX_SAFE_INTEGER ? `a whole number of at least ${minimum}` : `a whole number from ${minimum} to ${maximum}`;
  }
  return `a ${String(schema.type)}`;
}

/** One of REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (with REDIS_SENTINEL_NAME), or none. */
function redisTargetOf(v: Vars, problems: string[], list: (value: string) => string[], checkUrl: () => string): RedisTarget | undefined {
  const chosen = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => v[name] !== undefined);
  if (chosen.length > 1) problems.push(`set only one of ${chosen.join(', ')}: they are three ways to name the shared store`);
  if (v.REDIS_SENTINELS !== undefined && v.REDIS_SENTINEL_NAME === undefined)
    problems.push('REDIS_SENTINELS needs REDIS_SENTINEL_NAME, the name the Sentinels monitor the primary under');
  const addresses = (name: 'REDIS_CLUSTER_NODES' | 'REDIS_SENTINELS'): RedisAddress[] => {
    const items = list(String(v[name]));
    const parsed = items.map(parseAddress);
    if (items.length === 0 || parsed.some((a) => a === undefined)) problems.push(`${name} must be host:port,... (got "${v[name]}")`);
    return parsed.filter((a) => a !== undefined);
  };
  const auth: RedisNodeAuth = { username: v.REDIS_USERNAME, password: v.REDIS_PASSWORD, tls: TRUTHY.has(v.REDIS_TLS) };
  if (v.REDIS_URL !== undefined) return { kind: 'redis', url: checkUrl() };
  if (v.REDIS_CLUSTER_NODES !== undefined) return { kind: 'redis-cluster', nodes: addresses('REDIS_CLUSTER_NODES'), ...auth };
  if (v.REDIS_SENTINELS !== undefined) {
    const sentinels = addresses('REDIS_SENTINELS');
    return { kind: 'redis-sentinel', sentinels, name: v.REDIS_SENTINEL_NAME ?? '', sentinelPassword: v.REDIS_SENTINEL_PASSWORD, ...auth };
  }
  return undefined;
}

/** CLIENT_KEYS, or the file CLIENT_KEYS_FILE names; a wrong entry is named by position and name, never its hash. */
function clientKeysOf(v: Vars, problems: string[]): ClientKey[] {
  if (v.CLIENT_KEYS !== undefined && v.CLIENT_KEYS_FILE !== undefined) {
    problems.push('set only one of CLIENT_KEYS and CLIENT_KEYS_FILE');
    return [];
  }
  let text = v.CLIENT_KEYS;
  const file = v.CLIENT_KEYS_FILE;
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      problems.push(`CLIENT_KEYS_FILE cannot be read (${file}): ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
      return [];
    }
  }
  try {
    return text === undefined ? [] : parseClientKeys(text);
  } catch (error) {
    problems.push(`${file === undefined ? 'CLIENT_KEYS' : 'CLIENT_KEYS_FILE'}: ${(error as Error).message}`);
    return [];
  }
}

/** `host:port` or `[v6]:port`. */
function parseAddress(text: string): RedisAddress | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || port < 1 || port > 65_535) return undefined;
  return { host: (match[1] ?? match[2]) as string, port };
}

function isSecret(name: string): boolean {
  return (EnvSchema.properties as Record<string, Record<string, unknown>>)[name]?.[SECRET] === true;
}

function trustProxy(value: string): boolean | number | string {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
