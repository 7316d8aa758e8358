// Bar histories for the indicator simulator, keyed the way Alpha Vantage keys its rows: trading days
// (`YYYY-MM-DD`, each its regular session) for daily and longer, US/Eastern minutes (`YYYY-MM-DD HH:MM`,
// the bar's start) inside the extended session for intraday. The bar holding `now` is cut at `now`, so the
// newest values move with the price. The bars are the shared session bars (../session-bars.ts), the same
// the Yahoo simulator charts.
//
// A history starts on an anchor (a fixed multiple of bars since the epoch) rather than exactly
// `minBars` back: indicators seeded at the start (EMA, Wilder, OBV, A/D) then give the same value for a
// past row on every request until the anchor moves, as a provider computing on full history would.
import type { Interval } from '../../wire/alpha-vantage/indicators.js';
import type { Bar } from '../price-model.js';
import { aggregateBars, intradayBar, sessionBar } from '../session-bars.js';
import { DAY_MS, MINUTE_MS, easternMinute, inExtendedSession, isUtcWeekday, usTradingDay } from '../../core/us-market-time.js';

export interface KeyedBar extends Bar {
  /** The row key Alpha Vantage would use for this bar. */
  key: string;
}

const INTRADAY_MINUTES: Partial<Record<Interval, number>> = { '1min': 1, '5min': 5, '15min': 15, '30min': 30, '60min': 60 };
const ANCHOR = { intraday: 128, daily: 128, weekly: 52, monthly: 12 } as const;

/** At least `minBars` bars ending with the one holding `nowMs`, oldest first. */
export function barHistory(symbol: string, interval: Interval, nowMs: number, minBars: number): KeyedBar[] {
  const minutes = INTRADAY_MINUTES[interval];
  if (minutes !== undefined) return intradayBars(symbol, minutes * MINUTE_MS, nowMs, minBars);
  if (interval === 'daily') return dailyBars(symbol, nowMs, minBars);
  if (interval === 'weekly') return groupedBars(symbol, nowMs, minBars, weekOf, ANCHOR.weekly);
  return groupedBars(symbol, nowMs, minBars, monthOf, ANCHOR.monthly);
}

function intradayBars(symbol: string, stepMs: number, nowMs: number, minBars: number): KeyedBar[] {
  const bars: KeyedBar[] = [];
  for (let index = Math.floor(nowMs / stepMs); ; index -= 1) {
    const start = index * stepMs;
    const bar = inExtendedSession(start) ? intradayBar(symbol, start, stepMs, nowMs) : undefined;
    if (bar !== undefined) bars.push({ ...bar, key: easternMinute(start) });
    if (bars.length >= minBars && index % ANCHOR.intraday === 0) break;
  }
  return bars.reverse();
}

function dailyBars(symbol: string, nowMs: number, minBars: number): KeyedBar[] {
  const bars: KeyedBar[] = [];
  for (let day = Math.floor(nowMs / DAY_MS); ; day -= 1) {
    const bar = dayBar(symbol, day * DAY_MS, nowMs);
    if (bar !== undefined) bars.push(bar);
    if (bars.length >= minBars && day % ANCHOR.daily === 0) break;
  }
  return bars.reverse();
}

/** The group (week or month) a day belongs to: an ordinal, and the first day of the group. */
type Grouping = (day: number) => { group: number; firstDay: number };

/** Weeks run Monday to Sunday; day 0 (1970-01-01) was a Thursday. */
function weekOf(day: number): { group: number; firstDay: number } {
  const group = Math.floor((day + 3) / 7);
  return { group, firstDay: group * 7 - 3 };
}

function monthOf(day: number): { group: number; firstDay: number } {
  const date = new Date(day * DAY_MS);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  return { group: year * 12 + month, firstDay: Date.UTC(year, month, 1) / DAY_MS };
}

/** Weekly or monthly bars aggregated from the trading days they hold, keyed by their last trading day. */
function groupedBars(symbol: string, nowMs: number, minBars: number, grouping: Grouping, anchor: number): KeyedBar[] {
  const bars: KeyedBar[] = [];
  let lastDay = Math.floor(nowMs / DAY_MS);
  for (;;) {
    const { group, firstDay } = grouping(lastDay);
    const days: KeyedBar[] = [];
    for (let day = firstDay; day <= lastDay; day += 1) {
      const bar = dayBar(symbol, day * DAY_MS, nowMs);
      if (bar !== undefined) days.push(bar);
    }
    const merged = aggregateBars(days);
    // Keyed by the group's last trading day, as Alpha Vantage keys weeks and months.
    if (merged !== undefined) bars.push({ ...merged, key: (days.at(-1) as KeyedBar).key });
    if (bars.length >= minBars && group % anchor === 0) break;
    lastDay = firstDay - 1;
  }
  return bars.reverse();
}

/** The regular session of a weekday (the UTC day from `start`), cut at `nowMs`; none before its opening. */
function dayBar(symbol: string, start: number, nowMs: number): KeyedBar | undefined {
  if (!isUtcWeekday(start)) return undefined;
  const day = usTradingDay(start);
  if (day.open > nowMs) return undefined;
  return { ...sessionBar(symbol, day.open, day.close, nowMs), key: day.date };
}
