// A technical indicator computed from Yahoo chart bars, for when provider A cannot answer: the bars of the
// requested interval (chart-spans.ts), read as Alpha Vantage rows (chart-bars.ts), through the same
// indicator maths and body layout as the sandbox's Alpha Vantage (src/indicators/).
import { ApiError } from '../../core/errors.js';
import type { TechnicalQuery } from '../alpha-vantage/alpha-vantage-client.js';
import { indicatorParams, indicatorSpec } from '../../wire/alpha-vantage/indicators.js';
import type { IndicatorParams } from '../../indicators/indicator-params.js';
import { technicalBody } from '../../indicators/technical-body.js';
import { chartBars } from './chart-bars.js';
import { CHART_SPANS } from './chart-spans.js';
import type { YahooChartSource } from './yahoo-chart-source.js';
import { yahooSymbol } from './yahoo-symbols.js';

/**
 * The loader of the body for `query` (its symbol as the caller wrote it, upper case), or undefined when
 * Yahoo cannot stand in: a symbol with no Yahoo equivalent, or a past month of intraday history.
 */
export function yahooTechnicalLoader(chart: YahooChartSource, query: TechnicalQuery): (() => Promise<Record<string, unknown>>) | undefined {
  const mapped = yahooSymbol(query.symbol);
  const params = paramsOf(query);
  if (mapped === undefined || params === undefined || query.month !== undefined) return undefined;
  const span = CHART_SPANS[query.interval];
  return () =>
    chart.fetchChart(mapped, span.range, span.interval, (result) => {
      const { bars, timeZone } = chartBars(result, query.interval, mapped);
      // A chart with no bars (a weekend's intraday range: no `timestamp`, `quote: [{}]`) has nothing to
      // compute from. Not Yahoo's failure, so it is not held against its circuit; the caller hears provider A's error.
      if (bars.length === 0) throw new ApiError('SYMBOL_NOT_FOUND', `Yahoo has no ${query.interval} bars for ${mapped}`);
      return technicalBody(query.indicator, query.symbol, bars, params, { timeZone });
    });
}

/** The query's parameters with the defaults provider A is called with (serveTechnical fills time period and series). */
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
