// A stored Yahoo series (chart-series.ts) as the bars of an Alpha Vantage interval: the series' own bars,
// or grouped as Alpha Vantage groups them. Weeks and months of daily bars are keyed by their last trading
// day, as Alpha Vantage keys them (Yahoo's 1wk/1mo bars are keyed by the period's first day, holidays
// unknown). Hours are built from 30-minute bars and keyed by the hour's start: Alpha Vantage's 60-minute
// bars run from the full hour, Yahoo's 60m bars from the session's opening at 09:30 (yfinance issue #490),
// so no Yahoo 60m bar is one of Alpha Vantage's, while two 30m bars always make one.
import type { KeyedBar } from '../../indicators/technical-body.js';
import type { Interval } from '../../wire/alpha-vantage/indicators.js';
import { INTERVAL_SERIES } from './chart-spans.js';
import type { ChartSeries } from './chart-series.js';

export interface IntervalBars {
  /** Oldest first. */
  bars: KeyedBar[];
  /** The zone the keys are in, named as Alpha Vantage names it (`US/Eastern`). */
  timeZone: string;
}

const DAY_MS = 86_400_000;
/** Alpha Vantage's names for zones it prints (it says `US/Eastern` for New York). */
const AV_ZONE_NAMES: Record<string, string> = { 'America/New_York': 'US/Eastern' };

/** The bars of `interval` in `series` (the series INTERVAL_SERIES names for it). */
export function intervalBars(series: ChartSeries, interval: Interval): IntervalBars {
  const bars = series.keys.map((key, i) => ({
    key,
    open: series.open[i] as number,
    high: series.high[i] as number,
    low: series.low[i] as number,
    close: series.close[i] as number,
    volume: series.volume[i] as number,
  }));
  const timeZone = AV_ZONE_NAMES[series.zone] ?? series.zone;
  switch (INTERVAL_SERIES[interval].group) {
    case 'week':
      return { bars: grouped(bars, weekOf, lastKey), timeZone };
    case 'month':
      return { bars: grouped(bars, (key) => key.slice(0, 7), lastKey), timeZone };
    case 'hour':
      return {
        bars: grouped(
          bars,
          (key) => key.slice(0, 13),
          (group) => `${group}:00`,
        ),
        timeZone,
      };
    default:
      return { bars, timeZone };
  }
}

const lastKey = (_group: string, last: string) => last;

/** Monday-to-Sunday weeks, numbered from the key's calendar day (day 0, 1970-01-01, was a Thursday). */
function weekOf(key: string): string {
  return String(Math.floor((Date.parse(`${key}T00:00:00Z`) / DAY_MS + 3) / 7));
}

/** Consecutive bars of one group as one bar, keyed by `keyOf` the group and its last bar's key. */
function grouped(bars: readonly KeyedBar[], groupOf: (key: string) => string, keyOf: (group: string, last: string) => string): KeyedBar[] {
  const out: KeyedBar[] = [];
  let group: string | undefined;
  for (const bar of bars) {
    const g = groupOf(bar.key);
    const last = out[out.length - 1];
    if (last === undefined || g !== group) {
      out.push({ ...bar, key: keyOf(g, bar.key) });
    } else {
      out[out.length - 1] = {
        key: keyOf(g, bar.key),
        open: last.open,
        high: Math.max(last.high, bar.high),
        low: Math.min(last.low, bar.low),
        close: bar.close,
        volume: last.volume + bar.volume,
      };
    }
    group = g;
  }
  return out;
}
