// Technical indicators from provider A or computed from the stored Yahoo bars (computed-technical.ts), as
// TECHNICAL_SOURCE says:
//  - `provider`: provider A; computed when provider A cannot answer (the quote fallback's conditions: budget
//    spent, a limit body, a failure or timeout, an open circuit, no key in live mode).
//  - `computed`: computed only; provider A's budget is never spent on an indicator. What cannot be computed
//    (a symbol without a Yahoo equivalent, a past month of intraday history) is 503 PROVIDER_NOT_CONFIGURED.
//  - `auto`: computed where the stored bars give provider A's own values, so provider A's budget stays for
//    what only it answers: quotes, symbols Yahoo does not carry, a past month of intraday history, monthly
//    intervals (ten years of daily bars are 120 months, too short a run-in for a seeded average to settle to
//    provider A's last decimal) and the cumulative OBV and AD (sums from the first bar of a provider's
//    history, so their level depends on where it starts); and for a computable one when Yahoo cannot answer
//    and nothing is stored (Yahoo down, or not knowing the symbol).
// Without Yahoo (QUOTE_FALLBACK=none) nothing is computed: `auto` is `provider` without its fallback
// (config.ts refuses `computed` then). Each source is cached under its own scope, so they never mix; the
// answer says which one produced it.
import type { CacheResult, CacheWindow } from '../cache/cache-store.js';
import type { UpstreamCache } from '../cache/upstream-cache.js';
import type { TechnicalSource } from '../core/config.js';
import { ApiError } from '../core/errors.js';
import { ALPHA_VANTAGE } from '../core/upstream-ids.js';
import type { AlphaVantageClient, TechnicalQuery } from '../upstreams/alpha-vantage/alpha-vantage-client.js';
import { type Configured, use } from '../core/configured.js';
import { readIndicatorOptions } from '../wire/alpha-vantage/indicator-options.js';
import { INTRADAY_INTERVALS, type Interval, indicatorSpec } from '../wire/alpha-vantage/indicators.js';
import { alphaVantageKeys } from './cache-keys.js';
import type { ComputedTechnical } from './computed-technical.js';
import { type DataSource, FALLBACK, PRIMARY, type SourceTally } from './data-source.js';
import { mayFallBack, type SourcedResult } from './quote-service.js';

export interface TechnicalServiceOptions {
  cache: UpstreamCache;
  windows: { daily: CacheWindow; intraday: CacheWindow };
  /** Key prefixes of provider A's and Yahoo's values (their state scopes). */
  scopes: { primary: string; fallback: string };
  alphaVantage: Configured<AlphaVantageClient>;
  /** Undefined when QUOTE_FALLBACK is `none`: no Yahoo bars. */
  computed: ComputedTechnical | undefined;
  source: TechnicalSource;
  tally: SourceTally;
}

/**
 * A /technical request as the service's query: the symbol upper-cased, the indicator's own parameters read as
 * Alpha Vantage reads them (readIndicatorOptions), the rest ignored. `indicator` and `interval` are canonical
 * (the caller's schema checked them). The REST route and the MCP tool get_indicator both read a request here.
 */
export function technicalQuery(
  request: { symbol: string; indicator: string; interval: Interval } & Record<string, unknown>,
): TechnicalQuery {
  const { symbol, indicator, interval } = request;
  return { symbol: symbol.toUpperCase(), indicator, interval, ...readIndicatorOptions(indicator, interval, request) };
}

export class TechnicalService {
  constructor(private readonly options: TechnicalServiceOptions) {}

  /**
   * The indicator for `query` (symbol upper case, the indicator's parameters read by
   * readIndicatorOptions): parameters it does not take are dropped and the ones it takes get their defaults.
   */
  async get(query: TechnicalQuery): Promise<SourcedResult<unknown>> {
    const call = canonical(query);
    const { computed, source } = this.options;
    const whyNot = computed === undefined ? 'no Yahoo bars (QUOTE_FALLBACK=none)' : computed.whyNot(call);
    if (source === 'computed') {
      if (whyNot !== undefined)
        throw new ApiError(
          'PROVIDER_NOT_CONFIGURED',
          `${whyNot}: answered by provider A only, and TECHNICAL_SOURCE=computed keeps indicators off it`,
        );
      return this.computed(call);
    }
    if (source === 'auto' && whyNot === undefined && providerOnly(call) === undefined) {
      try {
        return await this.computed(call);
      } catch (error) {
        // Yahoo cannot answer and nothing is stored: provider A can (its error, if it cannot either).
        if (!(error instanceof ApiError)) throw error;
        return this.primary(call);
      }
    }
    try {
      return await this.primary(call);
    } catch (error) {
      if (whyNot !== undefined || !mayFallBack(error)) throw error;
      try {
        return await this.computed(call);
      } catch {
        throw error;
      }
    }
  }

  private async primary(call: TechnicalQuery): Promise<SourcedResult<unknown>> {
    const { cache, scopes, alphaVantage, windows } = this.options;
    const window = INTRADAY_INTERVALS.has(call.interval) ? windows.intraday : windows.daily;
    const result = await cache.fetch(alphaVantageKeys.technical(scopes.primary, call), window, () => use(alphaVantage).technical(call), {
      upstream: ALPHA_VANTAGE,
    });
    return this.answer(result, PRIMARY);
  }

  private async computed(call: TechnicalQuery): Promise<SourcedResult<unknown>> {
    const computed = this.options.computed as ComputedTechnical;
    const result = await computed.get(call, alphaVantageKeys.technical(this.options.scopes.fallback, call));
    this.options.cache.count(result.status);
    return this.answer(result, FALLBACK);
  }

  private answer(result: CacheResult<unknown>, source: DataSource): SourcedResult<unknown> {
    this.options.tally.count('technical', source);
    return { result, source };
  }
}

/** Sums from the first bar of the history: their level depends on where a provider's history starts. */
const CUMULATIVE: ReadonlySet<string> = new Set(['OBV', 'AD']);

/** Why `auto` asks provider A for a call the stored bars could compute, or undefined. */
function providerOnly(call: TechnicalQuery): string | undefined {
  if (call.interval === 'monthly') return 'a monthly interval';
  if (CUMULATIVE.has(call.indicator)) return 'a cumulative indicator';
  return undefined;
}

/** The call provider A gets: time period and series type exactly when the indicator takes them. */
function canonical(query: TechnicalQuery): TechnicalQuery {
  const spec = indicatorSpec(query.indicator);
  const timePeriod = spec?.timePeriod === null ? undefined : (query.timePeriod ?? spec?.timePeriod ?? undefined);
  const seriesType = spec?.seriesType ? (query.seriesType ?? 'close') : undefined;
  const { symbol, indicator, interval, extra, month } = query;
  return { symbol, indicator, interval, timePeriod, seriesType, extra, month };
}
