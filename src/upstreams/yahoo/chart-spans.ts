// The Yahoo bar series the service stores per symbol, and which one each Alpha Vantage interval is computed
// from. A series is fetched once over its long range, then kept up to date with its recent range (one day)
// merged in (chart-series.ts); bars older than `keepDays` are dropped. The long ranges hold enough bars for
// an indicator to settle (technical-body.ts's run-in plus the rows served) inside Yahoo's limits: 1m data
// for the last 7 days only, other intraday data for 60 days, named ranges only. Intraday series include the
// pre- and post-market (includePrePost), as Alpha Vantage's intraday series do (04:00 to 20:00 New York).
import type { Interval } from '../../wire/alpha-vantage/indicators.js';

export type SeriesSize = '1m' | '5m' | '15m' | '30m' | '1d';

export interface SeriesSpan {
  /** Yahoo's `range` of the first fetch, and of a fetch again when the stored series cannot be extended. */
  range: string;
  /** The `range` that extends a stored series: the current (or last) session. */
  recent: string;
  /** `includePrePost=true`: the extended hours' bars too. */
  prePost: boolean;
  /** Bars older than this many days are dropped when the series is extended. */
  keepDays: number;
}

export const SERIES_SPANS: Readonly<Record<SeriesSize, SeriesSpan>> = {
  '1m': { range: '5d', recent: '1d', prePost: true, keepDays: 7 }, // ~4,800 bars of 04:00-20:00
  '5m': { range: '1mo', recent: '1d', prePost: true, keepDays: 31 }, // ~4,000
  '15m': { range: '1mo', recent: '1d', prePost: true, keepDays: 31 }, // ~1,350
  '30m': { range: '1mo', recent: '1d', prePost: true, keepDays: 31 }, // ~670: the longest named range under the 60-day limit
  '1d': { range: '10y', recent: '1d', prePost: false, keepDays: 3_653 }, // ~2,500 sessions
};

export const INTRADAY_SIZES: ReadonlySet<SeriesSize> = new Set(['1m', '5m', '15m', '30m']);

/** The series an Alpha Vantage interval is computed from, and how its bars are grouped (chart-bars.ts). */
export const INTERVAL_SERIES: Readonly<Record<Interval, { size: SeriesSize; group?: 'hour' | 'week' | 'month' }>> = {
  '1min': { size: '1m' },
  '5min': { size: '5m' },
  '15min': { size: '15m' },
  '30min': { size: '30m' }, // ~670 bars: a shorter run-in than the others (about 570 bars before the oldest row)
  '60min': { size: '30m', group: 'hour' }, // ~335 hours: about 235 before the oldest row
  daily: { size: '1d' },
  weekly: { size: '1d', group: 'week' }, // ~520 weeks
  monthly: { size: '1d', group: 'month' }, // ~120 months
};
