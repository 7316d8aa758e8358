// Provider A's TIME_SERIES_* functions through the cache: /daily and every series function of /query, each
// answer with how fresh its bars are (the X-Data-Freshness header; entitlement.ts).
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { AlphaVantageEntitlement } from '../core/config.js';
import type { Freshness } from '../core/freshness.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import type { AlphaVantageClient } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { seriesFreshness } from '../upstreams/alpha-vantage/entitlement.js';
import { type Configured, use } from '../core/configured.js';
import type { TimeSeriesBody } from '../upstreams/alpha-vantage/parse-time-series.js';
import { type SeriesQuery, takesOutputSize } from '../wire/alpha-vantage/time-series.js';
import { alphaVantageKeys } from './cache-keys.js';

export interface SeriesServiceOptions {
  cache: UpstreamCache;
  windows: { daily: CacheWindow; intraday: CacheWindow };
  /** Provider A's state scope. */
  scope: string;
  alphaVantage: Configured<AlphaVantageClient>;
  /** ALPHA_VANTAGE_ENTITLEMENT. */
  entitlement?: AlphaVantageEntitlement;
}

export class SeriesService {
  constructor(private readonly options: SeriesServiceOptions) {}

  /** `query.symbol` upper case. */
  async get(query: SeriesQuery): Promise<CacheResult<TimeSeriesBody> & { freshness: Freshness }> {
    const { cache, windows, scope, alphaVantage, entitlement } = this.options;
    const call = canonical(query);
    const window = call.fn === 'TIME_SERIES_INTRADAY' ? windows.intraday : windows.daily;
    const result = await cache.fetch(alphaVantageKeys.series(scope, call), window, () => use(alphaVantage).timeSeries(call), {
      upstream: ALPHA_VANTAGE,
    });
    return { ...result, freshness: seriesFreshness(result.entry.value, call.fn, entitlement, result.entry.storedAt) };
  }
}

/** The call provider A gets: its function's defaults filled in, parameters it does not take left out. */
function canonical(query: SeriesQuery): SeriesQuery {
  const intraday = query.fn === 'TIME_SERIES_INTRADAY';
  return {
    fn: query.fn,
    symbol: query.symbol,
    outputsize: takesOutputSize(query.fn) ? (query.outputsize ?? 'compact') : undefined,
    interval: intraday ? (query.interval ?? '5min') : undefined,
    month: intraday ? query.month : undefined,
    extendedHours: intraday ? query.extendedHours : undefined,
    adjusted: intraday ? query.adjusted : undefined,
  };
}
