// A Yahoo one-day chart as Alpha Vantage's GLOBAL_QUOTE, field by field: price `regularMarketPrice`;
// previous close `previousClose` (else `regularMarketPreviousClose`, else `chartPreviousClose` of a
// one-day range: real daily charts carry only that one; see previousCloseOf); change and change percent
// against it; high and low `regularMarketDayHigh/Low` (else the day's bar), widened to hold the price (a
// recorded ^TNX chart has its price above regularMarketDayHigh); volume `regularMarketVolume`, else the
// day's bar's (a recorded 2020 AAPL chart has no regularMarketVolume); open from the day's bar; latest
// trading day the date of `regularMarketTime` in the exchange's time zone. Four decimals, as provider A
// writes them. The service reads the same fields from its stored daily series (seriesQuote), whose bars
// give the day's bar and the previous session's close.
import { type Freshness, instant } from '../../core/freshness.js';
import { fixed } from '../../wire/alpha-vantage/decimal.js';
import type { GlobalQuoteBody } from '../../wire/alpha-vantage/bodies.js';
import type { ChartSeries } from './chart-series.js';
import { type ChartResult, chartFreshness, finite, isObject, previousCloseOf, unexpected } from './parse-chart.js';

/** Whole ten-thousandths, so that change = price − previous close exactly as the strings read. */
const ticks = (value: number) => Math.round(value * 10_000);
const fromTicks = (t: number) => fixed(t / 10_000, 4);

/** What a chart was asked for: its `range` ('' for `period1`/`period2`) and its bar `interval`. @internal */
export interface ChartAsk {
  range: string;
  interval: string;
}

/** The chart a quote is read from: one day of daily bars. */
const QUOTE_CHART = { range: '1d', interval: '1d' } as const satisfies ChartAsk;

/**
 * `callerSymbol` is what the caller asked for (`BRK.B`); the chart is of its Yahoo symbol (`BRK-B`), asked
 * as `asked` (QUOTE_CHART unless a test reads a chart asked otherwise).
 * @internal
 */
export function chartQuote(
  { meta, result }: ChartResult,
  yahooSymbol: string,
  callerSymbol: string,
  asked: ChartAsk = QUOTE_CHART,
): GlobalQuoteBody {
  const previous = previousCloseOf(meta, asked.range);
  return quoteOf(meta, yahooSymbol, callerSymbol, (day) => {
    if (previous === undefined) throw unexpected(yahooSymbol, 'chart-no-previous-close', 'a chart without the previous close');
    return { bar: dayBar(result, meta, day, isIntraday(asked.interval)), previous };
  });
}

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

/** The ten fields from a chart's meta, with the day's bar and the previous close `dayOf` finds for the day. */
function quoteOf(
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

/** Minutes and hours (`5m`, `1h`); not `1mo`. */
function isIntraday(interval: string): boolean {
  return /^\d+[mh]$/.test(interval);
}

interface DayBar {
  open: number;
  high: number;
  low: number;
  /** Undefined when no bar of the day has one. */
  volume: number | undefined;
}

/**
 * The day's bar: of a daily chart the first bar dated `day` in the exchange's zone with an open, a high and
 * a low; of an intraday chart those bars of the day together (first open, highest high, lowest low, summed
 * volume).
 */
function dayBar(result: Record<string, unknown>, meta: Record<string, unknown>, day: string, intraday: boolean): DayBar | undefined {
  const times = Array.isArray(result.timestamp) ? result.timestamp : [];
  const indicators = isObject(result.indicators) ? result.indicators : undefined;
  const quote = Array.isArray(indicators?.quote) && isObject(indicators.quote[0]) ? indicators.quote[0] : {};
  const column = (name: string) => (Array.isArray(quote[name]) ? (quote[name] as unknown[]) : []);
  const [opens, highs, lows, volumes] = [column('open'), column('high'), column('low'), column('volume')];
  let found: DayBar | undefined;
  for (let i = 0; i < times.length; i += 1) {
    const [time, open, high, low, volume] = [finite(times[i]), finite(opens[i]), finite(highs[i]), finite(lows[i]), finite(volumes[i])];
    if (time === undefined || open === undefined || high === undefined || low === undefined) continue;
    if (exchangeDate(time, meta) !== day) continue;
    if (found === undefined) {
      found = { open, high, low, volume };
      if (!intraday) return found;
    } else {
      found.high = Math.max(found.high, high);
      found.low = Math.min(found.low, low);
      if (volume !== undefined) found.volume = (found.volume ?? 0) + volume;
    }
  }
  return found;
}
