// The market data services the routes answer from: provider A's quotes, indicators, search, series and
// forwarded functions (with the stored Yahoo bars as the fallback where configured), /query over them,
// provider B's dividends with their signed paging cursors, and the market overview.
import type { Logger } from 'pino';
import type { CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { Config } from '../core/config.js';
import { type Configured, configured, notConfigured } from '../core/configured.js';
import { ALPHA_VANTAGE, MASSIVE, YAHOO } from '../core/upstream-ids.js';
import type { UpstreamHealth } from '../health/upstream-health.js';
import { AlphaVantageQuery } from '../services/alpha-vantage-query.js';
import { BarStore } from '../services/bar-store.js';
import { ComputedTechnical } from '../services/computed-technical.js';
import type { SourceTally } from '../services/data-source.js';
import { DividendService } from '../services/dividend-service.js';
import { ForwardService } from '../services/forward-service.js';
import { MarketOverview } from '../services/market-overview.js';
import { QuoteService } from '../services/quote-service.js';
import { SearchService } from '../services/search-service.js';
import { SeriesQuotes } from '../services/series-quotes.js';
import { SeriesService } from '../services/series-service.js';
import { TechnicalService } from '../services/technical-service.js';
import type { StateStore } from '../store/state-store.js';
import type { StateScopes } from '../store/upstream-identity.js';
import { cursorKeys } from '../upstreams/massive/cursor-keys.js';
import { CursorCodec } from '../upstreams/massive/dividend-cursor.js';
import type { Upstreams } from './upstreams.js';

export interface MarketServices {
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
}

export interface MarketServicesContext {
  config: Config;
  logger: Logger;
  cache: UpstreamCache;
  health: UpstreamHealth;
  store: StateStore;
  scopes: StateScopes;
  sources: SourceTally;
  upstreams: Upstreams;
}

export async function createMarketServices(context: MarketServicesContext): Promise<MarketServices> {
  const { config, cache, scopes, sources } = context;
  const { alphaVantage, avBudget, yahoo } = context.upstreams;
  const av = config.alphaVantage;
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

  return {
    quotes,
    technical,
    search,
    series,
    query: new AlphaVantageQuery({ quotes, technical, search, series, forwarded }),
    dividends: await dividendService(context),
    bars,
    overview: marketOverview(context),
  };
}

/** A cursor outlives every cached page that links to it: the page's fresh and stale windows, plus an hour to follow it. */
const CURSOR_FOLLOW_MS = 3_600_000;

/** Provider B's dividends, their paging cursors signed with the key every replica shares (cursor-keys.ts). */
async function dividendService({ config, logger, cache, store, scopes, upstreams }: MarketServicesContext): Promise<DividendService> {
  const { DIVIDENDS } = config.cache.windows;
  const cursors = new CursorCodec({
    keys: await cursorKeys(config.cursorSecret, store.shared, logger),
    // Bound to the mode and Massive identity (URL and key): a cursor of another one is foreign here.
    context: scopes.of(MASSIVE),
    ttlMs: DIVIDENDS.freshMs + DIVIDENDS.staleMs + CURSOR_FOLLOW_MS,
  });
  return new DividendService({ cache, window: DIVIDENDS, scope: scopes.of(MASSIVE), massive: upstreams.massive, cursors });
}

/** Yahoo's charts of the configured symbols; not configured when OVERVIEW_SOURCE is `none`. */
function marketOverview({
  config,
  logger,
  cache,
  health,
  scopes,
  upstreams: { yahoo },
}: MarketServicesContext): Configured<MarketOverview> {
  if (config.overview.source !== 'yahoo' || yahoo === undefined)
    return notConfigured('the market overview is switched off (OVERVIEW_SOURCE=none)');
  return configured(
    new MarketOverview({
      source: yahoo,
      scope: scopes.of(YAHOO),
      symbols: config.overview.symbols,
      concurrency: config.overview.concurrency,
      window: config.cache.windows.OVERVIEW,
      cache,
      health,
      logger,
    }),
  );
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
