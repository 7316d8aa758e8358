// Which Yahoo chart each Alpha Vantage interval is computed from, with enough history for an indicator to
// settle (technical-body.ts's run-in plus the rows served) inside Yahoo's limits: 1m data for the last 7
// days only, other intraday data for 60 days (60m for 730), and named ranges only. Weekly and monthly
// rows are built from daily bars (chart-bars.ts), so they are keyed by their last trading day as Alpha
// Vantage keys them (Yahoo's 1wk/1mo bars are keyed by the period's first day, holidays unknown).
import type { Interval } from '../../wire/alpha-vantage/indicators.js';

export interface ChartSpan {
  interval: string;
  range: string;
}

export const CHART_SPANS: Readonly<Record<Interval, ChartSpan>> = {
  '1min': { interval: '1m', range: '5d' }, // ~1,950 regular-session bars
  '5min': { interval: '5m', range: '1mo' }, // ~1,700
  '15min': { interval: '15m', range: '1mo' }, // ~570
  '30min': { interval: '30m', range: '1mo' }, // ~290: the longest named range under the 60-day limit
  '60min': { interval: '60m', range: '6mo' }, // ~880
  daily: { interval: '1d', range: '5y' }, // ~1,260
  weekly: { interval: '1d', range: '10y' }, // ~520 weeks
  monthly: { interval: '1d', range: '10y' }, // ~120 months
};
