// US/Eastern wall-clock time without Intl (fast enough to test thousands of bar starts per request):
// daylight saving from the second Sunday of March 02:00 to the first Sunday of November 02:00. The
// simulated providers time US sessions by it, so their bars fall on the same minutes, and the IBKR stream
// asks it whether a silent symbol's market is open.

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const dstCache = new Map<number, readonly [number, number]>();

/** The UTC instants daylight saving starts and ends in `year`. */
function dstRange(year: number): readonly [number, number] {
  let range = dstCache.get(year);
  if (range === undefined) {
    const marchFirst = new Date(Date.UTC(year, 2, 1)).getUTCDay();
    const novemberFirst = new Date(Date.UTC(year, 10, 1)).getUTCDay();
    const secondSundayOfMarch = 1 + ((7 - marchFirst) % 7) + 7;
    const firstSundayOfNovember = 1 + ((7 - novemberFirst) % 7);
    // 02:00 EST is 07:00 UTC; 02:00 EDT is 06:00 UTC.
    range = [Date.UTC(year, 2, secondSundayOfMarch, 7), Date.UTC(year, 10, firstSundayOfNovember, 6)] as const;
    dstCache.set(year, range);
  }
  return range;
}

/** US/Eastern offset from UTC at `utcMs`, in ms (negative). */
export function easternOffsetMs(utcMs: number): number {
  const [start, end] = dstRange(new Date(utcMs).getUTCFullYear());
  return utcMs >= start && utcMs < end ? -4 * HOUR_MS : -5 * HOUR_MS;
}

/** A Date whose UTC fields read as US/Eastern wall-clock time. */
function eastern(utcMs: number): Date {
  return new Date(utcMs + easternOffsetMs(utcMs));
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of the UTC calendar day (daily bars follow the price model's UTC days). */
function utcDate(utcMs: number): string {
  return new Date(utcMs).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD HH:MM` in US/Eastern. */
export function easternMinute(utcMs: number): string {
  const d = eastern(utcMs);
  return `${d.toISOString().slice(0, 10)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

/** Monday to Friday by the UTC calendar. */
export function isUtcWeekday(utcMs: number): boolean {
  const day = new Date(utcMs).getUTCDay();
  return day !== 0 && day !== 6;
}

/** Inside the extended US session Alpha Vantage's intraday data covers: weekdays 04:00 to 20:00 Eastern. */
export function inExtendedSession(utcMs: number): boolean {
  const d = eastern(utcMs);
  const day = d.getUTCDay();
  const minute = d.getUTCHours() * 60 + d.getUTCMinutes();
  return day !== 0 && day !== 6 && minute >= 240 && minute < 1200;
}

/** Inside the regular US session: weekdays 09:30 to 16:00 Eastern. */
export function inRegularSession(utcMs: number): boolean {
  const d = eastern(utcMs);
  const day = d.getUTCDay();
  const minute = d.getUTCHours() * 60 + d.getUTCMinutes();
  return day !== 0 && day !== 6 && minute >= 570 && minute < 960;
}

/**
 * The instant a `month=YYYY-MM` request ends at: the end of that month (just after midnight US/Eastern,
 * outside every session), or `nowMs` if sooner. Null for a malformed month.
 */
export function monthEnd(month: string | null, nowMs: number): number | null {
  if (month === null) return nowMs;
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (match === null) return null;
  return Math.min(nowMs, Date.UTC(Number(match[1]), Number(match[2]), 1, 5) - 1);
}

/** One US trading day in UTC instants: pre-market from 04:00, the regular session 09:30 to 16:00, post-market to 20:00 Eastern. */
export interface UsTradingDay {
  /** `YYYY-MM-DD`, the day's date in New York. */
  date: string;
  preOpen: number;
  open: number;
  close: number;
  postClose: number;
}

/** The trading day dated like the UTC day starting at `utcDayStart` (a weekday), whatever its offset that day. */
export function usTradingDay(utcDayStart: number): UsTradingDay {
  // Offsets change at 02:00 on Sundays: by noon the day's offset holds all day.
  const midnight = utcDayStart - easternOffsetMs(utcDayStart + 12 * HOUR_MS);
  return {
    date: utcDate(utcDayStart),
    preOpen: midnight + 4 * HOUR_MS,
    open: midnight + 9.5 * HOUR_MS,
    close: midnight + 16 * HOUR_MS,
    postClose: midnight + 20 * HOUR_MS,
  };
}
