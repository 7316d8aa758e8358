// TIME_SERIES_DAILY/WEEKLY/MONTHLY/INTRADAY from the price model's bar histories (the same bars the
// indicators are computed on), laid out as Alpha Vantage lays them out, newest first.
import type { Interval } from '../../wire/alpha-vantage/indicators.js';
import { type OutputSize, type SeriesFunction, type SeriesInterval, seriesKey } from '../../wire/alpha-vantage/time-series.js';
import { barHistory } from './bar-history.js';
import { formatDecimal } from './format.js';
import { inRegularSession } from '../../core/us-market-time.js';

/** `compact` is Alpha Vantage's latest 100; `full` is bounded here (the real one reaches back 20+ years). */
const COMPACT = 100;
const FULL: Record<SeriesFunction, number> = {
  TIME_SERIES_DAILY: 1_000,
  TIME_SERIES_INTRADAY: 2_000,
  TIME_SERIES_WEEKLY: 260,
  TIME_SERIES_MONTHLY: 120,
};
const TIME_ZONE = 'US/Eastern';

export interface SeriesRequest {
  fn: SeriesFunction;
  symbol: string;
  outputsize: OutputSize;
  interval: SeriesInterval;
  /** Intraday: false keeps the regular session's bars only. */
  extendedHours: boolean;
}

/** Extended-session bars per regular-session bar, rounded up (16 h against 6.5 h). */
const EXTENDED_PER_REGULAR = 3;

export function timeSeriesBody(request: SeriesRequest, nowMs: number): Record<string, unknown> {
  const { fn, symbol, outputsize, interval } = request;
  const takesSize = fn === 'TIME_SERIES_DAILY' || fn === 'TIME_SERIES_INTRADAY';
  const rows = takesSize && outputsize === 'compact' ? COMPACT : FULL[fn];
  const intraday = fn === 'TIME_SERIES_INTRADAY';
  const regularOnly = intraday && !request.extendedHours;
  const history = barHistory(symbol, barInterval(fn, interval), nowMs, regularOnly ? rows * EXTENDED_PER_REGULAR : rows);
  const bars = (regularOnly ? history.filter((bar) => inRegularSession(bar.time)) : history).slice(-rows).reverse();
  const series: Record<string, Record<string, string>> = {};
  for (const bar of bars) {
    series[intraday ? `${bar.key}:00` : bar.key] = {
      '1. open': formatDecimal(bar.open, 4),
      '2. high': formatDecimal(bar.high, 4),
      '3. low': formatDecimal(bar.low, 4),
      '4. close': formatDecimal(bar.close, 4),
      '5. volume': String(Math.round(bar.volume)),
    };
  }
  const lastRefreshed = Object.keys(series)[0] ?? '';
  return { 'Meta Data': metaData(request, lastRefreshed), [seriesKey(fn, interval)]: series };
}

function barInterval(fn: SeriesFunction, interval: SeriesInterval): Interval {
  if (fn === 'TIME_SERIES_INTRADAY') return interval;
  return fn === 'TIME_SERIES_DAILY' ? 'daily' : fn === 'TIME_SERIES_WEEKLY' ? 'weekly' : 'monthly';
}

function metaData({ fn, symbol, outputsize, interval }: SeriesRequest, lastRefreshed: string): Record<string, string> {
  const size = outputsize === 'full' ? 'Full size' : 'Compact';
  switch (fn) {
    case 'TIME_SERIES_INTRADAY':
      return {
        '1. Information': `Intraday (${interval}) open, high, low, close prices and volume`,
        '2. Symbol': symbol,
        '3. Last Refreshed': lastRefreshed,
        '4. Interval': interval,
        '5. Output Size': size,
        '6. Time Zone': TIME_ZONE,
      };
    case 'TIME_SERIES_DAILY':
      return {
        '1. Information': 'Daily Prices (open, high, low, close) and Volumes',
        '2. Symbol': symbol,
        '3. Last Refreshed': lastRefreshed,
        '4. Output Size': size,
        '5. Time Zone': TIME_ZONE,
      };
    default:
      return {
        '1. Information': `${fn === 'TIME_SERIES_WEEKLY' ? 'Weekly' : 'Monthly'} Prices (open, high, low, close) and Volumes`,
        '2. Symbol': symbol,
        '3. Last Refreshed': lastRefreshed,
        '4. Time Zone': TIME_ZONE,
      };
  }
}
