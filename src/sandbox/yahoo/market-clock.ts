// When each kind of instrument trades: US stocks and indices in New York time (daylight saving included),
// the regular session 09:30 to 16:00 on weekdays, and for stocks and ETFs pre-market from 04:00 and
// post-market to 20:00 (src/core/us-market-time.ts, which the Alpha Vantage simulator keys its bars by);
// futures, in UTC, from Sunday 23:00 to Friday 22:00 with a daily pause from 22:00 to 23:00; crypto always.
// Closed markets keep their last price and time.
import { easternOffsetMs, isUtcWeekday, usTradingDay } from '../../core/us-market-time.js';
import type { Session } from './chart-instruments.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

function dayStartUtc(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

function isOpen(session: Session, time: number): boolean {
  if (session === 'always') return true;
  if (session === 'us-equity') {
    const start = dayStartUtc(time);
    if (!isUtcWeekday(start)) return false;
    const day = usTradingDay(start);
    return time >= day.open && time < day.close;
  }
  const day = new Date(time).getUTCDay();
  const hour = (time - dayStartUtc(time)) / HOUR_MS;
  if (day === 6) return false;
  if (day === 0) return hour >= 23;
  if (day === 5) return hour < 22;
  return hour < 22 || hour >= 23;
}

/** Inside a US weekday's extended hours, 04:00 to 20:00 New York time (pre-market, regular and post-market). */
function isExtendedOpen(time: number): boolean {
  const start = dayStartUtc(time);
  if (!isUtcWeekday(start)) return false;
  const day = usTradingDay(start);
  return time >= day.preOpen && time < day.postClose;
}

/** The time of the last trade at or before `now`: now (to the minute) while open, else the last session's close. */
export function lastTradeTime(session: Session, now: number): number {
  return lastOpenTime((time) => isOpen(session, time), now);
}

/** As lastTradeTime, counting pre- and post-market trades (US stocks and ETFs). */
export function lastExtendedTradeTime(now: number): number {
  return lastOpenTime(isExtendedOpen, now);
}

function lastOpenTime(open: (time: number) => boolean, now: number): number {
  const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  if (open(minute)) return minute;
  // Walk back to the last open minute; a market is never closed for more than three days.
  let t = minute;
  for (let i = 0; i < 4 * 24 * 4 && !open(t); i += 1) t -= 15 * MINUTE_MS;
  while (open(t + MINUTE_MS) && t + MINUTE_MS <= minute) t += MINUTE_MS;
  // The closing print carries the minute the session ends.
  return t + MINUTE_MS;
}

/** Start of the trading session that holds `time` (for crypto, midnight UTC). */
export function sessionOpen(session: Session, time: number): number {
  const start = dayStartUtc(time);
  if (session === 'always') return start;
  if (session === 'us-equity') return usTradingDay(start).open;
  // Futures sessions open at 23:00 the evening before.
  return (time - start) / HOUR_MS >= 23 ? start + 23 * HOUR_MS : start - HOUR_MS;
}

/** End of the trading session that opens at `open` (crypto's day ends a minute before midnight, as Yahoo's does). */
export function sessionClose(session: Session, open: number): number {
  if (session === 'always') return open + DAY_MS - MINUTE_MS;
  if (session === 'us-equity') return open + 6.5 * HOUR_MS;
  return open + 23 * HOUR_MS;
}

/** The weekday a session belongs to (futures sessions open the evening before). */
function isTradingDay(session: Session, sessionStart: number): boolean {
  if (session === 'always') return true;
  const day = new Date(sessionStart + 2 * HOUR_MS).getUTCDay();
  return day >= 1 && day <= 5;
}

/** Every trading session that opens by `to` and closes after `from`, oldest first: [open, close]. */
export function sessionsBetween(session: Session, from: number, to: number): Array<[number, number]> {
  const sessions: Array<[number, number]> = [];
  for (let day = dayStartUtc(from) - DAY_MS; day <= to; day += DAY_MS) {
    const open = sessionOpen(session, day + 12 * HOUR_MS);
    const close = sessionClose(session, open);
    if (isTradingDay(session, open) && open <= to && close > from) sessions.push([open, close]);
  }
  return sessions;
}

/** The close of the last session that ended at or before `time`. */
export function lastCloseBefore(session: Session, time: number): number {
  for (let day = dayStartUtc(time); ; day -= DAY_MS) {
    const open = sessionOpen(session, day + 12 * HOUR_MS);
    const close = sessionClose(session, open);
    if (isTradingDay(session, open) && close <= time) return close;
  }
}

/** The exchange's offset from UTC at `time`, in seconds, and its zone's abbreviation as Yahoo writes it. */
export function exchangeOffset(session: Session, time: number): { gmtoffset: number; timezone: string } {
  if (session === 'always') return { gmtoffset: 0, timezone: 'UTC' };
  const offset = easternOffsetMs(time) / 1000;
  return { gmtoffset: offset, timezone: offset === -14_400 ? 'EDT' : 'EST' };
}
