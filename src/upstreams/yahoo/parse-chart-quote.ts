// Yahoo's chart fields as Alpha Vantage's GLOBAL_QUOTE, field by field: price `regularMarketPrice`;
// change and change percent against the previous session's close; high and low
// `regularMarketDayHigh/Low` (else the day's bar), widened to hold the price (a recorded ^TNX chart has its
// price above regularMarketDayHigh); volume `regularMarketVolume`, else the day's bar's (a recorded 2020
// AAPL chart has no regularMarketVolume); open from the day's bar; latest trading day the date of
// `regularMarketTime` in the exchange's time zone. Four decimals, as provider A writes them. The service
// reads them from its stored daily series (seriesQuote), whose bars give the day's bar and the previous
// session's close; it never asks Yahoo for a one-day chart. Its tests read the recorded one-day charts
// with the same fields (test/helpers/chart-quote.ts), the reference the stored series' quote is held to.
import { type Freshness, instant } from '../../core/freshness.js';
import { fixed } from '../../wire/alpha-vantage/decimal.js';
import type { GlobalQuoteBody } from '../../wire/alpha-vantage/bodies.js';
import type { ChartSeries } from './chart-series.js';
import { chartFreshness, finite, unexpected } from './parse-chart.js';

/** Whole ten-thousandths, so that change = price − previous close exactly as the strings read. */
const ticks = (value: number) => Math.round(value * 10_000);
const fromTicks = (t: number) => fixed(t / 10_000, 4);

/** A previous session more than a week before the day is not the previous session: bars are missing between. */
const MAX_SESSION_GAP_DAYS = 7;

/**
 * The quote from a stored daily series (chart-series.ts): the day's bar is the series' bar dated like
 * `regularMarketTime`, and the previous close is the close of the bar before it, the previous session (the
 * series is kept contiguous as it is extended), never a chart's chartPreviousClose, which only a one-day
 * range gives as the previous session's close. The rest as from a chart's meta, the newest the series saw.
 */
export function seriesQuote(series: ChartSeries, yahooSymbol: string, callerSymbol: string): GlobalQuoteBody {
  const meta = series.latest as unknown as Record<string, unknown>;
  return quoteOf(meta, yahooSymbol, callerSymbol, (day) => {
    const at = series.keys.lastIndexOf(day);
    if (at === -1) return { bar: undefined, previous: undefined };
    const bar = {
      open: series.open[at] as number,
      high: series.high[at] as number,
      low: series.low[at] as number,
      volume: series.volume[at],
    };
    const before = series.keys[at - 1];
    if (before === undefined || (Date.parse(day) - Date.parse(before)) / 86_400_000 > MAX_SESSION_GAP_DAYS)
      throw unexpected(yahooSymbol, 'chart-no-previous-close', 'bars without the previous session');
    return { bar, previous: series.close[at - 1] as number };
  });
}

/**
 * How fresh the quote of a stored series is: its newest chart's regularMarketTime against that chart's
 * trading periods, as of `storedAt`, when the chart came (parse-chart.ts, chartFreshness). Refreshed after
 * the close, the quote is the day's close (end-of-day); during the session Yahoo's price states no delay.
 */
export function seriesQuoteFreshness(series: ChartSeries, storedAt: number): Freshness {
  const time = series.latest.regularMarketTime;
  if (time === undefined) return { kind: 'unknown', asOf: instant(storedAt) };
  return chartFreshness(time, series.latest.tradingPeriods, storedAt);
}

/**
 * The ten fields from a chart's meta, with the day's bar and the previous close `dayOf` finds for the day.
 * @internal
 */
export function quoteOf(
  meta: Record<string, unknown>,
  yahooSymbol: string,
  callerSymbol: string,
  dayOf: (day: string) => { bar: DayBar | undefined; previous: number | undefined },
): GlobalQuoteBody {
  const need = (name: string, drift: string): number => {
    const value = finite(meta[name]);
    if (value === undefined) throw unexpected(yahooSymbol, drift, `a chart without ${name}`);
    return value;
  };
  const price = ticks(need('regularMarketPrice', 'chart-no-price'));
  const time = need('regularMarketTime', 'chart-no-time');
  const day = exchangeDate(time, meta);
  const { bar, previous: previousValue } = dayOf(day);
  // No bar of the day (Yahoo leaves a forming bar null; a holiday's chart has none): no quote rather than a made-up open.
  if (bar === undefined || previousValue === undefined) throw unexpected(yahooSymbol, 'chart-no-day-bar', "a chart without the day's bar");
  const previous = ticks(previousValue);
  const high = finite(meta.regularMarketDayHigh) ?? bar.high;
  const low = finite(meta.regularMarketDayLow) ?? bar.low;
  const volume = finite(meta.regularMarketVolume) ?? bar.volume ?? 0;
  const change = price - previous;
  return {
    'Global Quote': {
      '01. symbol': callerSymbol,
      '02. open': fromTicks(ticks(bar.open)),
      '03. high': fromTicks(Math.max(ticks(high), price)),
      '04. low': fromTicks(Math.min(ticks(low), price)),
      '05. price': fromTicks(price),
      '06. volume': String(Math.max(0, Math.round(volume))),
      '07. latest trading day': day,
      '08. previous close': fromTicks(previous),
      '09. change': fromTicks(change),
      '10. change percent': `${fixed(previous === 0 ? 0 : (change / previous) * 100, 4)}%`,
    },
  };
}

/** `YYYY-MM-DD` of `seconds` in the exchange's zone (its IANA name, else its fixed GMT offset). @internal */
export function exchangeDate(seconds: number, meta: Record<string, unknown>): string {
  const zone = typeof meta.exchangeTimezoneName === 'string' ? meta.exchangeTimezoneName : undefined;
  if (zone !== undefined) {
    try {
      return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(seconds * 1000);
    } catch {
      // An unknown zone name: the offset below is the next best.
    }
  }
  return new Date((seconds + (finite(meta.gmtoffset) ?? 0)) * 1000).toISOString().slice(0, 10);
}

/** @internal */
export interface DayBar {
  open: number;
  high: number;
  low: number;
  /** Undefined when no bar of the day has one. */
  volume: number | undefined;
}
