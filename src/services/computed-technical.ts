// Technical indicators computed from the stored bars (bar-store.ts), in Alpha Vantage's exact shape
// (src/indicators/): the interval's series, grouped into weeks, months or hours where Alpha Vantage's bars
// are (chart-bars.ts), through the maths the sandbox's provider A uses. Every parameter set of every
// indicator of a symbol reads the one series of its bar size, so a new parameter set costs no call.
//
// Freshness is the indicator's window (TECHNICAL_DAILY or TECHNICAL_INTRADAY) applied to the series: a
// series refreshed within the fresh window answers at once (HIT, whoever refreshed it: a quote's refresh
// serves the daily indicators too); within the stale window it answers STALE while one refresh runs;
// older, or none, it is refreshed first (MISS). The answer is as old as the series (Age counts from its refresh).
import { LRUCache } from 'lru-cache';
import type { CacheEntry, CacheResult, CacheStatus, CacheWindow } from '../cache/cache-store.js';
import { ApiError } from '../core/errors.js';
import type { IndicatorParams } from '../indicators/indicator-params.js';
import { technicalBody } from '../indicators/technical-body.js';
import type { TechnicalQuery } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { intervalBars } from '../upstreams/yahoo/chart-bars.js';
import { INTERVAL_SERIES } from '../upstreams/yahoo/chart-spans.js';
import type { ChartSeries } from '../upstreams/yahoo/chart-series.js';
import { yahooSymbol } from '../upstreams/yahoo/yahoo-symbols.js';
import { INTRADAY_INTERVALS, indicatorParams, indicatorSpec } from '../wire/alpha-vantage/indicators.js';
import type { BarStore, SeriesRef } from './bar-store.js';

export interface ComputedTechnicalOptions {
  bars: BarStore;
  windows: { daily: CacheWindow; intraday: CacheWindow };
}

/** Bodies kept per process: one per (query, series refresh); a dashboard's set is a few dozen. */
const MAX_BODIES = 256;

export class ComputedTechnical {
  private readonly bodies = new LRUCache<string, CacheEntry<Record<string, unknown>>>({ max: MAX_BODIES });

  constructor(private readonly options: ComputedTechnicalOptions) {}

  /**
   * Why `query` cannot be computed, or undefined when it can: a symbol without a sure Yahoo equivalent,
   * or a past month of intraday history (the stored series reach back a month at most).
   */
  whyNot(query: TechnicalQuery): string | undefined {
    if (yahooSymbol(query.symbol) === undefined) return `${query.symbol} has no Yahoo equivalent`;
    if (query.month !== undefined) return 'a past month of intraday history';
    if (paramsOf(query) === undefined) return `${query.indicator} is not computed here`;
    return undefined;
  }

  /** `query` (canonical: time period and series type exactly when the indicator takes them) computed from the stored bars. */
  async get(query: TechnicalQuery, key: string): Promise<CacheResult<Record<string, unknown>>> {
    const symbol = yahooSymbol(query.symbol);
    const params = paramsOf(query);
    if (symbol === undefined || params === undefined || query.month !== undefined)
      throw new ApiError('PROVIDER_NOT_CONFIGURED', `${query.indicator} for ${query.symbol} is answered by provider A only`);
    const ref: SeriesRef = { symbol, size: INTERVAL_SERIES[query.interval].size };
    const window = INTRADAY_INTERVALS.has(query.interval) ? this.options.windows.intraday : this.options.windows.daily;
    const { bars } = this.options;
    let series = await bars.peek(ref, window.freshMs);
    let status: CacheStatus;
    const age = series === undefined ? Number.POSITIVE_INFINITY : Date.now() - series.storedAt;
    if (series !== undefined && age < window.freshMs) status = 'HIT';
    else if (series !== undefined && age < window.freshMs + window.staleMs) {
      status = 'STALE';
      bars.refresh(ref);
    } else {
      series = await bars.load(ref);
      status = 'MISS';
    }
    return { entry: this.body(query, params, key, series, window), status };
  }

  private body(
    query: TechnicalQuery,
    params: IndicatorParams,
    key: string,
    series: CacheEntry<ChartSeries>,
    window: CacheWindow,
  ): CacheEntry<Record<string, unknown>> {
    const memo = `${key}@${series.storedAt}`;
    const known = this.bodies.get(memo);
    if (known !== undefined) return known;
    const { bars, timeZone } = intervalBars(series.value, query.interval);
    // A chart with no bars (a weekend's intraday range) has nothing to compute from: not Yahoo's failure,
    // so it is not held against its circuit; the caller hears that the symbol has no such bars.
    if (bars.length === 0) throw new ApiError('SYMBOL_NOT_FOUND', `Yahoo has no ${query.interval} bars for ${query.symbol}`);
    const entry = {
      value: technicalBody(query.indicator, query.symbol, bars, params, { timeZone }),
      storedAt: series.storedAt,
      freshUntil: series.storedAt + window.freshMs,
      staleUntil: series.storedAt + window.freshMs + window.staleMs,
    };
    this.bodies.set(memo, entry);
    return entry;
  }
}

/** The query's parameters with the defaults provider A is called with (canonical() filled time period and series). */
function paramsOf(query: TechnicalQuery): IndicatorParams | undefined {
  const spec = indicatorSpec(query.indicator);
  if (spec === undefined) return undefined;
  const extra: Record<string, number> = {};
  for (const { name } of indicatorParams(query.indicator)) {
    const value = Number(query.extra?.[name] ?? spec.extra?.[name]);
    if (!Number.isFinite(value)) return undefined;
    extra[name] = value;
  }
  return { interval: query.interval, timePeriod: query.timePeriod ?? null, seriesType: query.seriesType ?? null, extra };
}
