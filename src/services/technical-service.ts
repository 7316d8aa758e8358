// Technical indicators from provider A, with values computed from Yahoo's chart bars when provider A
// cannot answer (the quote fallback's conditions: budget spent, a limit body, a failure or timeout, an open
// circuit, no key in live mode). Each source is cached under its own scope, so they never mix; the answer
// says which one produced it.
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { AlphaVantageGetter, TechnicalQuery } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { indicatorSpec, INTRADAY_INTERVALS } from '../wire/alpha-vantage/indicators.js';
import type { YahooChartSource } from '../upstreams/yahoo/yahoo-chart-source.js';
import { yahooTechnicalLoader } from '../upstreams/yahoo/yahoo-technical.js';
import { ALPHA_VANTAGE, YAHOO } from '../core/upstream-ids.js';
import { type DataSource, FALLBACK, PRIMARY, type SourceTally } from './data-source.js';
import { mayFallBack, type SourcedResult } from './quote-service.js';

export interface TechnicalServiceOptions {
  cache: UpstreamCache;
  windows: { daily: CacheWindow; intraday: CacheWindow };
  /** Key prefixes of provider A's and Yahoo's stored values (their state scopes). */
  scopes: { primary: string; fallback: string };
  alphaVantage: AlphaVantageGetter;
  /** Undefined when QUOTE_FALLBACK is `none`. */
  chart: YahooChartSource | undefined;
  tally: SourceTally;
}

export class TechnicalService {
  constructor(private readonly options: TechnicalServiceOptions) {}

  /**
   * The indicator for `query` (symbol upper case, the indicator's parameters read by
   * readIndicatorOptions): parameters it does not take are dropped and the ones it takes get their defaults.
   */
  async get(query: TechnicalQuery): Promise<SourcedResult<unknown>> {
    const call = canonical(query);
    const window = INTRADAY_INTERVALS.has(call.interval) ? this.options.windows.intraday : this.options.windows.daily;
    const { cache, scopes, alphaVantage } = this.options;
    try {
      const result = await cache.fetch(this.key(scopes.primary, call), window, () => alphaVantage().technical(call), {
        upstream: ALPHA_VANTAGE,
      });
      return this.answer(result, PRIMARY);
    } catch (error) {
      return this.fromYahoo(call, window, error);
    }
  }

  /** Provider A could not answer: the indicator computed from Yahoo's bars, else provider A's error. */
  private async fromYahoo(call: TechnicalQuery, window: CacheWindow, primaryError: unknown): Promise<SourcedResult<unknown>> {
    const { chart, cache, scopes } = this.options;
    const load = chart !== undefined && mayFallBack(primaryError) ? yahooTechnicalLoader(chart, call) : undefined;
    if (load === undefined) throw primaryError;
    let result: CacheResult<unknown>;
    try {
      result = await cache.fetch(this.key(scopes.fallback, call), window, load, { upstream: YAHOO });
    } catch {
      throw primaryError;
    }
    return this.answer(result, FALLBACK);
  }

  private answer(result: CacheResult<unknown>, source: DataSource): SourcedResult<unknown> {
    this.options.tally.count('technical', source);
    return { result, source };
  }

  private key(scope: string, { indicator, symbol, interval, timePeriod, seriesType, extra, month }: TechnicalQuery): string {
    return `${scope}:tech:${indicator}:${symbol}:${interval}:${timePeriod ?? '-'}:${seriesType ?? '-'}${optionsKey(indicator, extra, month)}`;
  }
}

/** The call provider A gets: time period and series type exactly when the indicator takes them. */
function canonical(query: TechnicalQuery): TechnicalQuery {
  const spec = indicatorSpec(query.indicator);
  const timePeriod = spec?.timePeriod === null ? undefined : (query.timePeriod ?? spec?.timePeriod ?? undefined);
  const seriesType = spec?.seriesType ? (query.seriesType ?? 'close') : undefined;
  const { symbol, indicator, interval, extra, month } = query;
  return { symbol, indicator, interval, timePeriod, seriesType, extra, month };
}

/** Extra parameters that differ from their defaults, and the month: calls with defaults share one key. */
function optionsKey(indicator: string, extra: TechnicalQuery['extra'], month: string | undefined): string {
  const defaults = indicatorSpec(indicator)?.extra ?? {};
  const changed = Object.entries(extra ?? {}).filter(([name, value]) => defaults[name] !== value);
  const parts = changed.map(([name, value]) => `${name}=${value}`);
  if (month !== undefined) parts.push(`month=${month}`);
  return parts.length === 0 ? '' : `:${parts.join(',')}`;
}
