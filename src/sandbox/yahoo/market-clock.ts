// When each kind of instrument trades, in UTC (standard time; the simulator ignores daylight saving):
// US stocks and indices 14:30 to 21:00 on weekdays, futures from Sunday 23:00 to Friday 22:00 with a daily
// pause from 22:00 to 23:00, crypto always. Closed markets keep their last price and time.
import type { Session } from './chart-instruments.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export function dayStartUtc(time: number): number {
  return Math.floor(time / DAY_MS) * DAY_MS;
}

export function isOpen(session: Session, time: number): boolean {
  if (session === 'always') return true;
  const day = new Date(time).getUTCDay();
  const hour = (time - dayStartUtc(time)) / HOUR_MS;
  if (session === 'us-equity') return day >= 1 && day <= 5 && hour >= 14.5 && hour < 21;
  if (day === 6) return false;
  if (day === 0) return hour >= 23;
  if (day === 5) return hour < 22;
  return hour < 22 || hour >= 23;
}

/** The time of the last trade at or before `now`: now (to the minute) while open, else the last session's close. */
export function lastTradeTime(session: Session, now: number): number {
  const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  if (isOpen(session, minute)) return minute;
  // Walk back to the last open minute; a market is never closed for more than three days.
  let t = minute;
  for (let i = 0; i < 4 * 24 * 4 && !isOpen(session, t); i += 1) t -= 15 * MINUTE_MS;
  while (isOpen(session, t + MINUTE_MS) && t + MINUTE_MS <= minute) t += MINUTE_MS;
  // The closing print carries the minute the session ends.
  return t + MINUTE_MS;
}

/** Start of the trading session that holds `time` (for crypto, midnight UTC). */
export function sessionOpen(session: Session, time: number): number {
  const start = dayStartUtc(time);
  if (session === 'always') return start;
  if (session === 'us-equity') return start + 14.5 * HOUR_MS;
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
export function isTradingDay(session: Session, sessionStart: number): boolean {
  if (session === 'always') return true;
  const day = new Date(sessionStart + 2 * HOUR_MS).getUTCDay();
  return day >= 1 && day <= 5;
}
